/**
 * The settings' schema and what each field is called, in one module with
 * no Node imports, so the proxy (settings.ts, the API) and the dashboard's
 * form validate with the same rules and say the same words: human field
 * names, allowed ranges, realistic examples.
 */
import { z } from 'zod';

export interface NumericSettingInfo {
  /** The field's name as the form shows it. */
  readonly label: string;
  readonly unit: string;
  /** The unit for one: "second". */
  readonly unitOne: string;
  readonly min: number;
  readonly max: number;
  /** A realistic value, within the range. */
  readonly example: number;
  readonly help: string;
}

/** Numeric settings: names, ranges and examples; the schema below is built from these. */
export const NUMERIC_SETTINGS = {
  idleTimeoutSec: {
    label: 'Idle timeout',
    unit: 'seconds',
    unitOne: 'second',
    min: 1,
    max: 86_400,
    example: 60,
    help: 'Close a connection after this long without queries. About 60 s keeps most lookups on an open connection.',
  },
  poolSize: { label: 'Connections per resolver', unit: 'connections', unitOne: 'connection', min: 1, max: 16, example: 1, help: 'Open TLS connections kept to the resolver.' },
  maxInFlight: {
    label: 'Queries in flight per connection',
    unit: 'queries',
    unitOne: 'query',
    min: 1,
    max: 65_535,
    example: 1000,
    help: 'Pipelined queries allowed on one connection before the next one waits.',
  },
  logSize: { label: 'Query log size', unit: 'records', unitOne: 'record', min: 100, max: 100_000, example: 10_000, help: 'How many recent queries the proxy keeps for this log.' },
} as const satisfies Record<string, NumericSettingInfo>;

export type NumericSetting = keyof typeof NUMERIC_SETTINGS;

const wholeNumber = (key: NumericSetting): z.ZodInt => {
  const { label, unit, unitOne, min, max } = NUMERIC_SETTINGS[key];
  const of = (n: number): string => `${n} ${n === 1 ? unitOne : unit}`;
  return z
    .int({ error: `${label} must be a whole number from ${min} to ${of(max)}` })
    .min(min, { error: `${label} must be at least ${of(min)}` })
    .max(max, { error: `${label} must be at most ${of(max)}` });
};

const fields = {
  mode: z.enum(['strict', 'opportunistic'], {
    error: 'Mode must be "strict" (the resolver must prove who it is) or "opportunistic" (TLS even if unverified)',
  }),
  padding: z.boolean({ error: 'Pad queries must be on or off (true or false)' }),
  idleTimeoutSec: wholeNumber('idleTimeoutSec'),
  poolSize: wholeNumber('poolSize'),
  maxInFlight: wholeNumber('maxInFlight'),
  logSize: wholeNumber('logSize'),
  recordNames: z.boolean({ error: 'Record names must be on or off (true or false)' }),
};

/** @public The whole settings object; the dashboard's form validates against the same schema. */
export const SettingsSchema = z.strictObject(fields);
/** A change from the API: any subset, each field validated as above. */
export const SettingsPatchSchema = z.strictObject(fields).partial();

export type Settings = z.infer<typeof SettingsSchema>;
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

/** Every field's name as people read it (API field names stay for programs). */
export const SETTING_LABELS: Readonly<Record<keyof Settings, string>> = {
  mode: 'Privacy mode',
  padding: 'Pad queries',
  recordNames: 'Record names in the query log',
  idleTimeoutSec: NUMERIC_SETTINGS.idleTimeoutSec.label,
  poolSize: NUMERIC_SETTINGS.poolSize.label,
  maxInFlight: NUMERIC_SETTINGS.maxInFlight.label,
  logSize: NUMERIC_SETTINGS.logSize.label,
};

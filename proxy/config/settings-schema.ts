/**
 * The settings' schema and what each field is called, in one module with
 * no Node imports, so the proxy (settings.ts, the API) and the dashboard's
 * form validate with the same rules and say the same words: human field
 * names, allowed ranges, realistic examples.
 *
 * The schemas are built by settingsSchemas() from the caller's zod: the
 * dashboard imports it, the proxy loads it only when it validates
 * (files/zod.ts, issue 11).
 */
import type { z } from 'zod';

type ZodApi = typeof z;

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
  burstConnections: {
    label: 'Extra connections for bursts',
    unit: 'connections',
    unitOne: 'connection',
    min: 0,
    max: 8,
    example: 4,
    help: 'After a pause a resolver sends only its first window before it hears back: about 26 padded answers, or about 10 from a resolver that sends each answer at once (Nagle off). A page that looks up more names waits extra round trips. Connections opened when a burst needs them share it out, and close when idle. 0: one connection carries every burst.',
  },
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

/** `192.168.1.1`, `192.168.1.1:53`, `fe80::1`, `[fe80::1%wlan0]:53`: an address, not a name (pure: the dashboard runs this too). */
function isServerAddress(v: string): boolean {
  const port = (p: string | undefined): boolean => p === undefined || (/^\d{1,5}$/.test(p) && Number(p) > 0 && Number(p) < 65536);
  const v4 = (h: string): boolean => /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(h) && h.split('.').every((o) => Number(o) <= 255 && String(Number(o)) === o);
  const v6 = (h: string): boolean => /^[0-9a-f:.]+$/i.test(h.replace(/%[\w.-]+$/, '')) && h.includes(':') && (h.match(/::/g) ?? []).length <= 1;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(v);
  if (bracketed) return v6(bracketed[1] ?? '') && port(bracketed[2]);
  const hostPort = /^([\d.]+):(\d+)$/.exec(v);
  if (hostPort) return v4(hostPort[1] ?? '') && port(hostPort[2]);
  return v4(v) || v6(v);
}

/**
 * The settings' schemas, built with the caller's zod:
 * `SettingsSchema`, the whole settings object (the dashboard's form validates
 * against it), and `SettingsPatchSchema`, a change from the API (any subset,
 * each field validated the same way).
 */
export function settingsSchemas(z: ZodApi) {
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
    burstConnections: wholeNumber('burstConnections'),
    maxInFlight: wholeNumber('maxInFlight'),
    logSize: wholeNumber('logSize'),
    recordNames: z.boolean({ error: 'Record names must be on or off (true or false)' }),
    portalCheck: z.boolean({ error: 'Check for Wi-Fi sign-in pages must be on or off (true or false)' }),
    cleartextFallback: z.boolean({ error: 'Cleartext fallback must be on or off (true or false)' }),
    networkDns: z
      .array(z.string().refine(isServerAddress, { error: 'Network DNS must be addresses like 192.168.1.1, 192.168.1.1:53 or [fe80::1%wlan0]:53' }), {
        error: 'Network DNS must be a list of addresses (empty: found automatically)',
      })
      .max(4, { error: 'Network DNS takes at most 4 addresses' }),
  };
  return { SettingsSchema: z.strictObject(fields), SettingsPatchSchema: z.strictObject(fields).partial() };
}

type Schemas = ReturnType<typeof settingsSchemas>;
export type Settings = z.infer<Schemas['SettingsSchema']>;
export type SettingsPatch = z.infer<Schemas['SettingsPatchSchema']>;

/** Every field's name as people read it (API field names stay for programs). */
export const SETTING_LABELS: Readonly<Record<keyof Settings, string>> = {
  mode: 'Privacy mode',
  portalCheck: 'Check for Wi-Fi sign-in pages',
  cleartextFallback: 'Cleartext fallback',
  networkDns: 'Network DNS',
  padding: 'Pad queries',
  recordNames: 'Record names in the query log',
  idleTimeoutSec: NUMERIC_SETTINGS.idleTimeoutSec.label,
  poolSize: NUMERIC_SETTINGS.poolSize.label,
  burstConnections: NUMERIC_SETTINGS.burstConnections.label,
  maxInFlight: NUMERIC_SETTINGS.maxInFlight.label,
  logSize: NUMERIC_SETTINGS.logSize.label,
};

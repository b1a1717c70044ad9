/**
 * Settings form: the fields, what they mean, and the checks the browser can
 * do before asking the API (which has the final word and its own messages).
 */
import type { Settings } from '../../../proxy/control/api-types.js';

type NumericSetting = 'idleTimeoutSec' | 'poolSize' | 'maxInFlight' | 'logSize';

export interface NumericField {
  readonly key: NumericSetting;
  readonly label: string;
  readonly unit: string;
  readonly help: string;
  readonly min: number;
}

export const NUMERIC_FIELDS: readonly NumericField[] = [
  {
    key: 'idleTimeoutSec',
    label: 'Idle timeout',
    unit: 'seconds',
    help: 'Close a connection after this long without queries. About 60 s keeps most lookups on an open connection.',
    min: 1,
  },
  { key: 'poolSize', label: 'Connections per resolver', unit: 'connections', help: 'Open TLS connections kept to the resolver.', min: 1 },
  {
    key: 'maxInFlight',
    label: 'Queries in flight per connection',
    unit: 'queries',
    help: 'Pipelined queries allowed on one connection before the next one waits.',
    min: 1,
  },
  { key: 'logSize', label: 'Query log size', unit: 'records', help: 'How many recent queries the proxy keeps for this log.', min: 1 },
];

/** Form text for each field; numbers are edited as strings so a half-typed value isn't lost. */
export type SettingsDraft = Omit<Settings, NumericSetting> & Record<NumericSetting, string>;

export function toDraft(s: Settings): SettingsDraft {
  return {
    ...s,
    idleTimeoutSec: String(s.idleTimeoutSec),
    poolSize: String(s.poolSize),
    maxInFlight: String(s.maxInFlight),
    logSize: String(s.logSize),
  };
}

/** Per-field messages for what the browser can tell is wrong; empty when it looks fine. */
export function validateDraft(d: SettingsDraft): Partial<Record<keyof Settings, string>> {
  const errors: Partial<Record<keyof Settings, string>> = {};
  for (const f of NUMERIC_FIELDS) {
    const raw = d[f.key].trim();
    if (raw === '') errors[f.key] = `Enter ${f.label.toLowerCase()} in ${f.unit}.`;
    else if (!/^\d+$/.test(raw)) errors[f.key] = `Use a whole number of ${f.unit}, e.g. ${f.key === 'idleTimeoutSec' ? 60 : 4}.`;
    else if (Number(raw) < f.min) errors[f.key] = `Use at least ${f.min}.`;
  }
  return errors;
}

/** Only the fields that differ from the saved settings (the body of PUT /api/settings). */
export function draftChanges(saved: Settings, d: SettingsDraft): Partial<Settings> {
  const out: Record<string, unknown> = {};
  if (d.mode !== saved.mode) out.mode = d.mode;
  if (d.padding !== saved.padding) out.padding = d.padding;
  if (d.recordNames !== saved.recordNames) out.recordNames = d.recordNames;
  if (d.portalCheck !== saved.portalCheck) out.portalCheck = d.portalCheck;
  if (d.cleartextFallback !== saved.cleartextFallback) out.cleartextFallback = d.cleartextFallback;
  if (d.networkDns.join(' ') !== saved.networkDns.join(' ')) out.networkDns = d.networkDns;
  for (const f of NUMERIC_FIELDS) {
    const n = Number(d[f.key].trim());
    if (d[f.key].trim() !== '' && n !== saved[f.key]) out[f.key] = n;
  }
  return out as Partial<Settings>;
}

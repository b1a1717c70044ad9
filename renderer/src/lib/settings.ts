/**
 * Settings form: the fields, what they mean, and validation with the
 * proxy's own schema (proxy/config/settings-schema.ts: one source for the
 * rules, the human field names and the ranges). The API still has the
 * final word.
 */
import type { Settings } from '../../../proxy/control/api-types.js';
import { z } from 'zod';
import { NUMERIC_SETTINGS, SETTING_LABELS, settingsSchemas, type NumericSetting, type NumericSettingInfo } from '../../../proxy/config/settings-schema.js';
import { formatCount } from './format.js';

export interface NumericField extends NumericSettingInfo {
  readonly key: NumericSetting;
  /** "1 to 86,400 seconds; e.g. 60" */
  readonly range: string;
}

const { SettingsSchema } = settingsSchemas(z);

export const NUMERIC_FIELDS: readonly NumericField[] = (Object.keys(NUMERIC_SETTINGS) as NumericSetting[]).map((key) => {
  const f = NUMERIC_SETTINGS[key];
  return { key, ...f, range: `Allowed: ${formatCount(f.min)} to ${formatCount(f.max)} ${f.unit}; e.g. ${formatCount(f.example)}.` };
});

/** Form text for each field; numbers (and the network DNS list) are edited as strings so a half-typed value isn't lost. */
export type SettingsDraft = Omit<Settings, NumericSetting | 'networkDns'> & Record<NumericSetting | 'networkDns', string>;

/** "192.168.1.1, 192.168.1.2" ⇄ ["192.168.1.1", "192.168.1.2"]. */
function dnsList(text: string): string[] {
  return text.split(/[\s,]+/).filter((x) => x !== '');
}

export function toDraft(s: Settings): SettingsDraft {
  return {
    ...s,
    networkDns: s.networkDns.join(', '),
    idleTimeoutSec: String(s.idleTimeoutSec),
    poolSize: String(s.poolSize),
    burstConnections: String(s.burstConnections),
    maxInFlight: String(s.maxInFlight),
    logSize: String(s.logSize),
  };
}

/** The draft as the values the schema checks: numbers where the text is a number, the text otherwise. */
function candidate(d: SettingsDraft): Record<string, unknown> {
  const out: Record<string, unknown> = { ...d, networkDns: dnsList(d.networkDns) };
  for (const f of NUMERIC_FIELDS) {
    const raw = d[f.key].trim().replace(/[,_\s]/g, '');
    out[f.key] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

/** Per-field messages from the schema, in the form's words; empty when it is valid. */
export function validateDraft(d: SettingsDraft): Partial<Record<keyof Settings, string>> {
  const errors: Partial<Record<keyof Settings, string>> = {};
  for (const f of NUMERIC_FIELDS) {
    if (d[f.key].trim() === '') errors[f.key] = `Enter ${f.label.toLowerCase()} in ${f.unit}: ${formatCount(f.min)} to ${formatCount(f.max)}, e.g. ${formatCount(f.example)}.`;
  }
  const r = SettingsSchema.safeParse(candidate(d));
  if (!r.success) {
    for (const issue of r.error.issues) {
      const key = issue.path[0] as keyof Settings | undefined;
      if (key !== undefined && errors[key] === undefined) errors[key] = `${issue.message}.`;
    }
  }
  return errors;
}

/** Errors as a list with each field's human name, in the form's order. */
export function errorList(errors: Partial<Record<string, string>>): { readonly key: string; readonly label: string; readonly message: string }[] {
  const order = ['mode', 'padding', 'recordNames', ...NUMERIC_FIELDS.map((f) => f.key)];
  return Object.entries(errors)
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .sort(([a], [b]) => (order.indexOf(a) + 99) % 99 - ((order.indexOf(b) + 99) % 99))
    .map(([key, message]) => ({ key, label: SETTING_LABELS[key as keyof Settings] ?? key, message }));
}

/** Only the fields that differ from the saved settings (the body of PUT /api/settings). */
export function draftChanges(saved: Settings, d: SettingsDraft): Partial<Settings> {
  const out: Record<string, unknown> = {};
  if (d.mode !== saved.mode) out.mode = d.mode;
  if (d.padding !== saved.padding) out.padding = d.padding;
  if (d.recordNames !== saved.recordNames) out.recordNames = d.recordNames;
  if (d.portalCheck !== saved.portalCheck) out.portalCheck = d.portalCheck;
  if (d.cleartextFallback !== saved.cleartextFallback) out.cleartextFallback = d.cleartextFallback;
  if (dnsList(d.networkDns).join(' ') !== saved.networkDns.join(' ')) out.networkDns = dnsList(d.networkDns);
  const c = candidate(d);
  for (const f of NUMERIC_FIELDS) {
    if (d[f.key].trim() !== '' && c[f.key] !== saved[f.key]) out[f.key] = c[f.key];
  }
  return out as Partial<Settings>;
}

/**
 * User settings: the schema (zod, with messages that say what to do), the
 * defaults, and their file in the config dir (`settings.json`).
 *
 * The file may hold a subset (missing fields take defaults, so files from
 * older versions keep working); unknown fields are an error, so a typo in a
 * hand edit is reported instead of ignored.
 */
import path from 'node:path';
import { z } from 'zod';
import { issueFields, JsonConfigFile, type ConfigProblem } from './config-file.js';
import { DEFAULT_POOL_OPTIONS } from '../upstream/pool.js';
import { parseServer } from '../network/network-resolver.js';

const wholeNumber = (what: string, min: number, max: number, unit = ''): z.ZodInt =>
  z
    .int({ error: `${what} must be a whole number from ${min} to ${max}${unit}` })
    .min(min, { error: `${what} must be at least ${min}${unit}` })
    .max(max, { error: `${what} must be at most ${max}${unit}` });

const fields = {
  mode: z.enum(['strict', 'opportunistic'], {
    error: 'mode must be "strict" (the resolver must prove who it is) or "opportunistic" (TLS even if unverified)',
  }),
  padding: z.boolean({ error: 'padding must be true or false' }),
  idleTimeoutSec: wholeNumber('idle timeout', 1, 86_400, ' seconds'),
  poolSize: wholeNumber('pool size', 1, 16, ' connections'),
  maxInFlight: wholeNumber('in-flight cap', 1, 65_535, ' queries per connection'),
  logSize: wholeNumber('query log size', 100, 100_000, ' records'),
  recordNames: z.boolean({ error: 'recordNames must be true or false' }),
  portalCheck: z.boolean({ error: 'portalCheck must be true or false' }),
  cleartextFallback: z.boolean({ error: 'cleartextFallback must be true or false' }),
  networkDns: z
    .array(
      z.string().refine((v) => parseServer(v) !== null, {
        error: 'network DNS must be addresses like 192.168.1.1, 192.168.1.1:53 or [fe80::1%wlan0]:53',
      }),
      { error: 'network DNS must be a list of addresses (empty: found automatically)' },
    )
    .max(4, { error: 'network DNS takes at most 4 addresses' }),
};

/** @public The whole settings object; the dashboard's form validates against the same schema. */
export const SettingsSchema = z.strictObject(fields);
/** A change from the API: any subset, each field validated as above. */
const SettingsPatchSchema = z.strictObject(fields).partial();

export type Settings = z.infer<typeof SettingsSchema>;
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

export const DEFAULT_SETTINGS: Settings = Object.freeze({
  mode: 'strict',
  padding: true,
  idleTimeoutSec: DEFAULT_POOL_OPTIONS.idleTimeoutMs / 1000,
  poolSize: DEFAULT_POOL_OPTIONS.size,
  maxInFlight: DEFAULT_POOL_OPTIONS.maxInFlight,
  logSize: 10_000,
  recordNames: true,
  portalCheck: true,
  cleartextFallback: false,
  networkDns: [],
});

/** Settings that only take effect on new connections: changing one rebuilds the pool. */
export const POOL_SETTINGS: readonly (keyof Settings)[] = ['mode', 'idleTimeoutSec', 'poolSize', 'maxInFlight'];

export type PatchResult = { ok: true; patch: SettingsPatch } | { ok: false; fields: Record<string, string> };

export function parseSettingsPatch(raw: unknown): PatchResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, fields: { '(body)': 'send a JSON object of settings to change, e.g. {"padding": false}' } };
  }
  const r = SettingsPatchSchema.safeParse(raw);
  return r.success ? { ok: true, patch: r.data } : { ok: false, fields: issueFields(r.error.issues) };
}

/** Names of the fields whose value differs. */
export function changedFields(before: Settings, after: Settings): (keyof Settings)[] {
  return (Object.keys(after) as (keyof Settings)[]).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

function settingsFile(configDir: string): JsonConfigFile<SettingsPatch> {
  return new JsonConfigFile<SettingsPatch>(path.join(configDir, 'settings.json'), (raw) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      return { ok: false, message: 'expected a JSON object of settings', fields: {} };
    }
    const r = SettingsPatchSchema.safeParse(raw);
    if (r.success) return { ok: true, value: r.data };
    const f = issueFields(r.error.issues);
    return { ok: false, message: `invalid settings: ${Object.entries(f).map(([k, v]) => `${k}: ${v}`).join('; ')}`, fields: f };
  });
}

/**
 * The persisted settings: what the file holds (a subset) on top of defaults.
 * CLI flags may override fields for one run without being saved.
 */
export class SettingsStore {
  readonly #file: JsonConfigFile<SettingsPatch>;
  #persisted: Settings = DEFAULT_SETTINGS;
  problem: ConfigProblem | null = null;

  constructor(configDir: string) {
    this.#file = settingsFile(configDir);
  }

  get path(): string {
    return this.#file.file;
  }

  load(): Settings {
    const { value, problem } = this.#file.load();
    this.problem = problem;
    this.#persisted = { ...DEFAULT_SETTINGS, ...(value ?? {}) };
    return this.#persisted;
  }

  get persisted(): Settings {
    return this.#persisted;
  }

  /** Saves `patch` on top of what is persisted (not on top of one-run CLI overrides). */
  async save(patch: SettingsPatch): Promise<Settings> {
    const next = { ...this.#persisted, ...patch };
    await this.#file.save(next);
    this.#persisted = next;
    this.problem = null;
    return next;
  }
}

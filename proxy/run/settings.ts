/**
 * User settings: the schema (zod, with messages that say what to do), the
 * defaults, and their file in the config dir (`settings.json`).
 *
 * The file may hold a subset (missing fields take defaults, so files from
 * older versions keep working); unknown fields are an error, so a typo in a
 * hand edit is reported instead of ignored.
 */
import path from 'node:path';
import { invalidFields, issueFields, JsonConfigFile, type ConfigProblem } from '../files/config-file.js';
import { DEFAULT_POOL_OPTIONS } from '../upstream/pool/options.js';
import { settingsSchemas, type Settings, type SettingsPatch } from '../config/settings-schema.js';
import { lazily } from '../files/zod.js';

const schemas = lazily(settingsSchemas);

export type { Settings, SettingsPatch } from '../config/settings-schema.js';

export const DEFAULT_SETTINGS: Settings = Object.freeze({
  mode: 'strict',
  padding: true,
  idleTimeoutSec: DEFAULT_POOL_OPTIONS.idleTimeoutMs / 1000,
  poolSize: DEFAULT_POOL_OPTIONS.size,
  burstConnections: DEFAULT_POOL_OPTIONS.burstConnections ?? 0,
  maxInFlight: DEFAULT_POOL_OPTIONS.maxInFlight,
  logSize: 10_000,
  recordNames: true,
  portalCheck: true,
  cleartextFallback: false,
  networkDns: [],
});

/** Settings that only take effect on new connections: changing one rebuilds the pool. */
export const POOL_SETTINGS: readonly (keyof Settings)[] = ['mode', 'idleTimeoutSec', 'poolSize', 'burstConnections', 'maxInFlight'];

export type PatchResult = { ok: true; patch: SettingsPatch } | { ok: false; fields: Record<string, string> };

export function parseSettingsPatch(raw: unknown): PatchResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, fields: { '(body)': 'send a JSON object of settings to change, e.g. {"padding": false}' } };
  }
  const r = schemas().SettingsPatchSchema.safeParse(raw);
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
    const r = schemas().SettingsPatchSchema.safeParse(raw);
    if (r.success) return { ok: true, value: r.data };
    return invalidFields('settings', issueFields(r.error.issues));
  });
}

/**
 * The persisted settings: what the file holds (a subset) on top of defaults.
 * CLI flags may override fields for one run without being saved.
 */
export class SettingsStore {
  readonly #file: JsonConfigFile<SettingsPatch>;
  #persisted: Settings = DEFAULT_SETTINGS;

  constructor(configDir: string) {
    this.#file = settingsFile(configDir);
  }

  get path(): string {
    return this.#file.file;
  }

  /** What was wrong with the file at the last load, until a save replaces it. */
  get problem(): ConfigProblem | null {
    return this.#file.problem;
  }

  load(): Settings {
    const { value } = this.#file.load();
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
    return next;
  }
}

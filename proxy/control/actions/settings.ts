/**
 * The settings part of the control API: the settings in effect, and a
 * partial change checked (the settings' zod schema, then the rules between
 * fields), saved, then applied. A change that fails either step changes
 * nothing. Settings that only new connections use (mode, pool size,
 * in-flight cap, idle timeout) rebuild the pool the way a resolver switch
 * does: nothing is dropped.
 */
import { canAuthenticate } from '../../config/resolver-store.js';
import { poolSettingsFrom } from '../../run/run-config.js';
import { changedFields, POOL_SETTINGS, type Settings, type SettingsStore } from '../../run/settings.js';
import { settingsSchemas } from '../../config/settings-schema.js';
import type { StubProxy } from '../../dotstub.js';
import type { TimelineEvent } from '../api-types.js';
import { validationFailure } from '../errors.js';
import type { QueryLog } from '../query-log.js';
import { lazily, parseBody } from './body.js';

const patchSchema = lazily((z) => settingsSchemas(z).SettingsPatchSchema);

export interface SettingsActionsOptions {
  readonly proxy: StubProxy;
  readonly store: SettingsStore;
  /** Settings in effect at start: persisted ones with this run's CLI overrides. */
  readonly effective: Settings;
  readonly log: QueryLog;
  readonly serial: <T>(fn: () => Promise<T>) => Promise<T>;
  readonly event: (e: TimelineEvent) => void;
  readonly background: (p: Promise<void>) => void;
}

export class SettingsActions {
  readonly #o: SettingsActionsOptions;
  #current: Settings;

  constructor(options: SettingsActionsOptions) {
    this.#o = options;
    this.#current = options.effective;
  }

  /** The settings in effect now. */
  get current(): Settings {
    return this.#current;
  }

  /** PUT /api/settings: answers with the settings in effect after the change. */
  update(raw: unknown): Promise<Settings> {
    return this.#o.serial(async () => {
      const patch = parseBody(patchSchema(), raw, '{"padding": false}');
      const before = this.#current;
      const next: Settings = { ...before, ...patch };
      // Turning the fallback on needs opportunistic mode; switching to strict just makes it inert.
      if (patch.cleartextFallback === true && next.mode === 'strict') {
        throw validationFailure(
          { cleartextFallback: 'the cleartext fallback needs opportunistic mode: strict mode never sends a lookup unencrypted' },
          { cleartextFallback: 'not_allowed' },
        );
      }
      const resolver = this.#o.proxy.resolver;
      if (next.mode === 'strict' && !canAuthenticate(resolver)) {
        throw validationFailure(
          { mode: `strict mode can't verify ${resolver.label} (no authentication name or pin): switch to a resolver that has one first` },
          { mode: 'not_allowed' },
        );
      }
      const changed = changedFields(before, next);
      if (changed.length === 0) return before;
      // Save exactly what the user changed, on top of what is persisted.
      await this.#o.store.save(Object.fromEntries(changed.map((k) => [k, next[k]])) as Partial<Settings>);
      this.#current = next;
      if (next.logSize !== before.logSize) this.#o.log.resize(next.logSize);
      if (!next.recordNames && before.recordNames) this.#o.log.forgetNames();
      const rebuild = changed.some((k) => POOL_SETTINGS.includes(k));
      this.#o.background(
        this.#o.proxy.reconfigure({
          padding: next.padding,
          recordNames: next.recordNames,
          networkDns: next.networkDns,
          allowDegraded: next.cleartextFallback,
          ...(rebuild ? { pool: poolSettingsFrom(next), auth: { ...this.#o.proxy.config.auth, mode: next.mode } } : {}),
        }),
      );
      this.#o.event({ kind: 'settings', at: Date.now(), changed });
      return next;
    });
  }
}

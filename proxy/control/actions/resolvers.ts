/**
 * The resolver part of the control API: check and add a custom resolver,
 * remove one, switch to one, probe one before a switch, "Test resolvers".
 * Bodies are checked first (zod, then the resolver's own rules); a change
 * that fails changes nothing. Changes run one at a time with the service's
 * other changes (`serial`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../files/config-file.js';
import { canAuthenticate, MAX_CUSTOM_RESOLVERS, validateCustomResolver, type ResolverContext, type ResolverStore } from '../../config/resolver-store.js';
import { closedSentence, retiredPreset, type ResolverSpec } from '../../config/resolvers.js';
import type { Settings } from '../../run/settings.js';
import type { StubProxy } from '../../dotstub.js';
import type { ResolverView, StatusView, TimelineEvent, ValidationView } from '../api-types.js';
import { ApiFailure, validationFailure } from '../errors.js';
import type { NetworkLadder } from '../ladder.js';
import { DEFAULT_RESOLVER_TEST, testResolvers, type MeasureScope, type ResolverTestResult } from '../resolver-test.js';
import { probeForSwitch, type SwitchProbeView } from '../switch-probe.js';
import { lazily, parseBody } from './body.js';

/** The last "Test resolvers" result, in the config dir: the cards keep their figures across a restart (issue 29). */
const LAST_TEST_FILE = 'last-resolver-test.json';

const ID_HINT = 'send {"id": "<resolver id>"}, an id from GET /api/resolvers';

/** `{ "id": "<resolver id>" }`: PUT /api/resolvers/active and POST /api/resolvers/probe. */
const idBody = lazily((z) => z.strictObject({ id: z.string({ error: ID_HINT }).min(1, { error: ID_HINT }) }));

export interface ResolverActionsOptions {
  readonly proxy: StubProxy;
  readonly store: ResolverStore;
  readonly ladder: NetworkLadder;
  /** The privacy mode in effect now. */
  readonly mode: () => Settings['mode'];
  /** Runs a change after the ones before it (the service's one queue). */
  readonly serial: <T>(fn: () => Promise<T>) => Promise<T>;
  readonly event: (e: TimelineEvent) => void;
  /** The list changed without an event (a resolver added or removed): the stream's next batch carries it. */
  readonly listChanged: () => void;
  /** Work that goes on after the answer (a pool drain); its failure is logged. */
  readonly background: (p: Promise<void>) => void;
  readonly view: (spec: ResolverSpec) => ResolverView;
  readonly status: () => StatusView;
  readonly measureScope: MeasureScope;
  readonly resolverTest: typeof DEFAULT_RESOLVER_TEST;
  /** Where the last test is kept (the config dir); none: only in memory. */
  readonly configDir?: string;
}

/** A result read back from disk, if it has the shape the page draws (a file from an older or newer dotstub, or edited, is left unused). */
function readLastTest(file: string): ResolverTestResult | null {
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ResolverTestResult> | null;
    const ok =
      j !== null &&
      typeof j === 'object' &&
      typeof j.startedAt === 'number' &&
      typeof j.tookMs === 'number' &&
      typeof j.activeId === 'string' &&
      Array.isArray(j.resolvers) &&
      j.resolvers.every((r) => typeof r === 'object' && r !== null && typeof r.id === 'string' && typeof r.label === 'string' && typeof r.measured === 'boolean' && Array.isArray(r.transports));
    return ok ? (j as ResolverTestResult) : null;
  } catch {
    return null;
  }
}

export class ResolverActions {
  readonly #o: ResolverActionsOptions;
  /** The "Test resolvers" run under way, if any: a second request joins it rather than starting another. */
  #testing: Promise<ResolverTestResult> | null = null;
  /** The last finished test (kept in the config dir, read back at start). */
  #last: ResolverTestResult | null;

  constructor(options: ResolverActionsOptions) {
    this.#o = options;
    this.#last = options.configDir ? readLastTest(path.join(options.configDir, LAST_TEST_FILE)) : null;
  }

  /** The last "Test resolvers" result, this run's or an earlier run's (its `startedAt` says when); null when none. */
  lastTest(): ResolverTestResult | null {
    return this.#last;
  }

  /** What a new resolver is checked against: the ones listed, the one in use, the mode. */
  #context(): ResolverContext {
    return { existing: this.#o.store.all(), activeId: this.#o.proxy.resolver.id, strict: this.#o.mode() === 'strict' };
  }

  /**
   * The resolver in use before the last switch, while it is still listed:
   * every page offers "Switch back to …" from this (ResolversView.previous),
   * not only the one that made the switch, whoever made it (a page, another
   * window, `dotstub ctl use`). Saved with the choice: after a restart too.
   */
  get previous(): string | null {
    const id = this.#o.store.previous;
    return id !== null && id !== this.#o.proxy.resolver.id && this.#o.store.get(id) ? id : null;
  }

  #spec(id: string): ResolverSpec {
    const spec = this.#o.store.get(id);
    const retired = spec ? undefined : retiredPreset(id);
    if (retired) {
      throw new ApiFailure('unknown_resolver', `"${id}" was retired: ${closedSentence(retired)} (${retired.operator}: "${retired.words}"); use "${retired.replacement}" instead`);
    }
    if (!spec) throw new ApiFailure('unknown_resolver', `unknown resolver "${id}": use an id from GET /api/resolvers`);
    return spec;
  }

  /** POST /api/resolvers/validate: every field's problem, as the form shows it beside the field. */
  validate(raw: unknown): ValidationView {
    const v = validateCustomResolver(raw, this.#context());
    if (v.ok) return { ok: true, fields: {}, fieldCodes: {} };
    return { ok: false, fields: v.fields, fieldCodes: validationFailure(v.fields, v.codes).fieldCodes ?? {} };
  }

  add(raw: unknown): Promise<ResolverView> {
    return this.#o.serial(async () => {
      // Same address and port as one listed (the command line's included), or unverifiable in strict mode: said beside the field.
      const v = validateCustomResolver(raw, this.#context());
      if (!v.ok) throw validationFailure(v.fields, v.codes);
      if (this.#o.store.customCount >= MAX_CUSTOM_RESOLVERS) {
        throw new ApiFailure('resolver_limit', `at most ${MAX_CUSTOM_RESOLVERS} custom resolvers; remove one first`);
      }
      await this.#o.store.add(v.spec);
      this.#o.listChanged();
      return this.#o.view(v.spec);
    });
  }

  remove(id: string): Promise<void> {
    return this.#o.serial(async () => {
      if (this.#o.store.isPreset(id)) throw new ApiFailure('resolver_is_preset', `${id} is a preset and can't be removed`);
      if (this.#o.proxy.resolver.id === id) throw new ApiFailure('resolver_in_use', `${id} is in use: switch to another resolver first`);
      if (!this.#o.store.isCustom(id)) throw new ApiFailure('unknown_resolver', `no custom resolver "${id}"`);
      await this.#o.store.remove(id);
      this.#o.listChanged();
    });
  }

  /** Switches to a known resolver; new queries go there at once, the old pool drains in the background. */
  switch(raw: unknown): Promise<StatusView> {
    return this.#o.serial(async () => {
      const { id } = parseBody(idBody(), raw, '{"id": "quad9"}');
      const spec = this.#spec(id);
      if (this.#o.mode() === 'strict' && !canAuthenticate(spec)) {
        throw new ApiFailure(
          'resolver_unverifiable',
          `${spec.label} has no authentication name or pin, so strict mode can't verify it: add one, or switch to opportunistic mode`,
        );
      }
      const from = this.#o.proxy.resolver.id;
      await this.#o.store.setActive(id, from);
      if (from !== id) {
        this.#o.ladder.reset(id);
        // The resolver's owner decides what the pick means on a network whose own resolver was chosen there
        // (privacy/resolver-choice.ts: used here until the network is joined again; that choice stays).
        this.#o.background(this.#o.proxy.choice.choose(spec));
        this.#o.event({ kind: 'resolver', at: Date.now(), from, to: id });
      }
      return this.#o.status();
    });
  }

  /** Before a switch: does `id` answer now? One connection and one query, about a second (switch-probe.ts). */
  probe(raw: unknown): Promise<SwitchProbeView> {
    try {
      const { id } = parseBody(idBody(), raw, '{"id": "quad9"}');
      return probeForSwitch(this.#spec(id), this.#o.proxy.config.auth, this.#o.measureScope);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * "Test resolvers": measures every listed resolver from this network, apart
   * from the active upstream (resolver-test.ts), and ranks them. One run at
   * a time: a request while one runs gets that run's result.
   */
  test(): Promise<ResolverTestResult> {
    if (this.#testing) return this.#testing;
    const run = testResolvers(this.#o.store.all(), this.#o.proxy.resolver.id, {
      ...this.#o.resolverTest,
      auth: this.#o.proxy.config.auth,
      scope: this.#o.measureScope,
    });
    this.#testing = run;
    const clear = (): void => {
      if (this.#testing === run) this.#testing = null;
    };
    run.then(clear, clear);
    const dir = this.#o.configDir;
    run.then(
      (result) => {
        this.#last = result;
        if (dir) this.#o.background(writeFileAtomic(path.join(dir, LAST_TEST_FILE), JSON.stringify(result) + '\n'));
      },
      () => undefined,
    );
    return run;
  }
}

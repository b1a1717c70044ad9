/**
 * The system-DNS part of the control API: the takeover's state, turning it
 * on, off or off for a while, and the leak self-test. The system-DNS layer's
 * typed errors (SYSDNS_*) become API failures with the product's codes.
 */
import type { QueryRecord } from '../../engine/query-record.js';
import { isSystemDnsError } from '../../system-dns/errors.js';
import type { SystemDnsManager, SystemDnsView } from '../../system-dns/manager.js';
import { ApiFailure } from '../errors.js';
import { lazily, parseBody } from './body.js';

const NOT_MANAGED = "this dotstub does not manage the system's DNS: start it with --system-dns (the dotstub service does), or use \"dotstub system-dns enable\"";

const PAUSE_MIN_SECONDS = 1;
const PAUSE_MAX_SECONDS = 86_400;
const PAUSE_WORDS = `a pause is {"enabled": false, "pauseSeconds": N} with N a whole number of seconds from ${PAUSE_MIN_SECONDS} to 86,400`;

/** `{ enabled: boolean, pauseSeconds?: N }`; a pause only with enabled false. */
const systemDnsBody = lazily((z) =>
  z
    .strictObject({
      enabled: z.boolean({ error: 'send {"enabled": true} to point this machine\'s DNS at dotstub, {"enabled": false} to give the old DNS back' }),
      pauseSeconds: z.int({ error: PAUSE_WORDS }).min(PAUSE_MIN_SECONDS, { error: PAUSE_WORDS }).max(PAUSE_MAX_SECONDS, { error: PAUSE_WORDS }).optional(),
    })
    .refine((b) => !(b.enabled && b.pauseSeconds !== undefined), { error: PAUSE_WORDS, path: ['pauseSeconds'] }),
);

/** The system-DNS layer's typed errors as API failures: code for scripts, the message for the user. */
function systemDnsFailure(err: unknown): unknown {
  if (!isSystemDnsError(err)) return err;
  switch (err.code) {
    case 'SYSDNS_NEEDS_ROOT':
      return new ApiFailure('needs_root', err.message);
    case 'SYSDNS_ALREADY_ENABLED':
      return new ApiFailure('system_dns_already_enabled', err.message);
    case 'SYSDNS_NOT_ENABLED':
      return new ApiFailure('system_dns_not_enabled', err.message);
    case 'SYSDNS_BACKEND_UNAVAILABLE':
      return new ApiFailure('system_dns_unavailable', err.message);
    case 'SYSDNS_BAD_INPUT':
      return new ApiFailure('bad_request', err.message);
    default:
      return new ApiFailure('system_dns_failed', err.message);
  }
}

export class SystemDnsActions {
  readonly #manager: SystemDnsManager | undefined;
  /** Reads the OS's state again for the leak line; a change's answer waits for it, so the page never reads the one from before. */
  readonly #reread: () => Promise<void>;
  /** Names seen by the leak test while it runs, with where their answer came from (from query events, so it works whatever the log keeps). */
  #leakNames: Map<string, QueryRecord['source']> | undefined;

  constructor(manager: SystemDnsManager | undefined, reread: () => Promise<void> = () => Promise.resolve()) {
    this.#manager = manager;
    this.#reread = reread;
  }

  /** Every query the proxy answered (the service forwards them): the leak test looks for its names. */
  sawQuery(r: QueryRecord): void {
    if (this.#leakNames && r.name !== null) this.#leakNames.set(r.name.toLowerCase().replace(/\.$/, ''), r.source);
  }

  #managed(): SystemDnsManager {
    if (!this.#manager) throw new ApiFailure('system_dns_not_managed', NOT_MANAGED);
    return this.#manager;
  }

  async view(): Promise<SystemDnsView> {
    return this.#managed().refresh().catch((err: unknown) => Promise.reject(systemDnsFailure(err)));
  }

  /**
   * `{ enabled: true | false }`: takes over the system's DNS, or gives it
   * back; `{ enabled: false, pauseSeconds: N }` gives it back for N seconds
   * (1 to 86,400; the dashboard offers 5 minutes and 1 hour), then takes it over again by itself.
   */
  async set(raw: unknown): Promise<SystemDnsView> {
    const manager = this.#managed();
    const body = parseBody(systemDnsBody(), raw, '{"enabled": true}');
    let view: SystemDnsView;
    try {
      view = await (body.pauseSeconds !== undefined ? manager.pause(body.pauseSeconds * 1000) : body.enabled ? manager.enable() : manager.disable());
    } catch (err) {
      throw systemDnsFailure(err);
    }
    await this.#reread();
    return view;
  }

  /** The leak self-test: a random name through the system must reach this proxy, and no other resolver be known. */
  async leakTest(): Promise<SystemDnsView> {
    const manager = this.#managed();
    if (this.#leakNames) throw new ApiFailure('leak_test_running', 'a leak test is already running');
    const seen = new Map<string, QueryRecord['source']>();
    this.#leakNames = seen;
    try {
      return await manager.leakTest(
        (name) => Promise.resolve(seen.has(name)),
        (name) => Promise.resolve(seen.get(name) === 'local'),
      );
    } catch (err) {
      throw systemDnsFailure(err);
    } finally {
      this.#leakNames = undefined;
    }
  }
}

/**
 * Whether the resolver dotstub uses validates DNSSEC, measured (issue 33,
 * item 3): once per resolver, after its first authenticated connection,
 * two lookups over that encrypted connection, with AD asked for:
 *
 *   a signed name   a validating resolver answers it with AD set
 *   a forged one    a validating resolver refuses it: SERVFAIL
 *
 * Both hold: "validated by Quad9 over an authenticated connection". Either
 * fails: the resolver does not validate, and the sentence says which.
 * Answers relay AD only from a verified connection anyway
 * (dns/upstream-answer.ts withoutAuthenticData), so this measurement is what
 * the dashboard says, not what makes AD safe. The lookups go over the
 * encrypted connection to the resolver the user chose, as their own
 * lookups do, never in cleartext; they are not cached, not logged.
 */
import type { ResolverSpec } from '../config/resolvers.js';
import type { DnssecProbeNames } from '../run/proxy-config.js';
import { queryFor } from '../dns/request.js';
import { FLAG_AD, FLAG_RD, HEADER_LENGTH, Rcode } from '../dns/header.js';
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import type { ManagedUpstream } from '../upstream/managed.js';
import { newTrace, type UpstreamRequest } from '../upstream/upstream.js';


export interface DnssecView {
  /** validated: both held; not-validated: the resolver answered, but not as a validating one; unknown: not measured (yet, or it failed). */
  readonly state: 'validated' | 'not-validated' | 'unknown';
  /** The resolver it was measured on; null before any. */
  readonly resolverId: string | null;
  readonly checkedAt: number | null;
  /** For people: "validated by Quad9 over an authenticated connection: …", or why not. */
  readonly sentence: string;
}

const NOT_YET: DnssecView = { state: 'unknown', resolverId: null, checkedAt: null, sentence: 'not measured yet: it is, once an authenticated connection opens' };
const TIMEOUT_MS = 5_000;

export class DnssecCheck {
  readonly #names: DnssecProbeNames;
  readonly #changed: (view: DnssecView) => void;
  #view: DnssecView = NOT_YET;
  /** The resolver measured last, or being measured. */
  #resolverId: string | null = null;

  constructor(names: DnssecProbeNames, changed: (view: DnssecView) => void) {
    this.#names = names;
    this.#changed = changed;
  }

  get view(): DnssecView {
    return this.#view;
  }

  /** An authenticated connection to the resolver in use opened: measured once per resolver (again after a switch back). */
  opened(upstream: ManagedUpstream): void {
    const resolver = upstream.resolver;
    if (this.#resolverId === resolver.id) return;
    this.#resolverId = resolver.id;
    void this.#measure(upstream, resolver);
  }

  async #measure(upstream: ManagedUpstream, resolver: ResolverSpec): Promise<void> {
    const who = resolver.authName && !resolver.label.includes(resolver.authName) ? `${resolver.label} (${resolver.authName})` : resolver.label;
    let view: DnssecView;
    try {
      const [signed, bogus] = await Promise.all([ask(upstream, this.#names.signed, 'SOA'), ask(upstream, this.#names.bogus, 'A')]);
      const ad = (signed.raw.readUInt16BE(2) & FLAG_AD) !== 0;
      const refused = bogus.rcode === Rcode.SERVFAIL;
      const base = { resolverId: resolver.id, checkedAt: Date.now() };
      if (ad && refused) view = { ...base, state: 'validated', sentence: `validated by ${who} over an authenticated connection: a signed name came back marked validated, a forged one was refused` };
      else if (!ad) view = { ...base, state: 'not-validated', sentence: `the resolver ${who} does not validate DNSSEC: a signed name came back without the validated (AD) mark` };
      else view = { ...base, state: 'not-validated', sentence: `the resolver ${who} does not check DNSSEC fully: a name with forged signatures was answered (${rcodeWords(bogus.rcode)}), not refused` };
    } catch (err) {
      // No verdict without an answer: asked again with the next connection.
      this.#resolverId = null;
      view = { resolverId: resolver.id, checkedAt: Date.now(), state: 'unknown', sentence: `not measured: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (this.#resolverId !== null && this.#resolverId !== resolver.id) return;
    this.#view = view;
    this.#changed(view);
  }
}

function rcodeWords(rcode: number): string {
  return rcode === Rcode.NOERROR ? 'NOERROR' : rcode === Rcode.NXDOMAIN ? 'NXDOMAIN' : `rcode ${rcode}`;
}

/** One lookup over `upstream`, AD asked for (RFC 6840 §5.7: a stub that wants AD says so). */
function ask(upstream: ManagedUpstream, name: string, type: 'SOA' | 'A'): Promise<UpstreamAnswer> {
  const req: UpstreamRequest = { ...queryFor(name, type, { pad: true, keepalive: true }, FLAG_RD | FLAG_AD), trace: newTrace() };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer for ${name} within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    upstream.resolve(req, (_r, err, answer) => {
      clearTimeout(timer);
      if (answer && answer.raw.length >= HEADER_LENGTH) resolve(answer);
      else reject(err ?? new Error(`no answer for ${name}`));
    });
  });
}

/**
 * Signing in to a captive portal, then private again by itself (issue 9,
 * docs/networks.md#the-sign-in). The rules this file keeps:
 *
 *   - cleartext goes only to the network's own resolver (network-resolver.ts),
 *     only for the names the sign-in needs (the OS/browser check names, the
 *     portal's redirect chain, the CAPPORT API and its pages), only while the
 *     exception lasts (5 minutes, the user may extend it to 15);
 *   - every other query is held: SERVFAIL at once (gate.ts), or a stale
 *     answer from the cache;
 *   - strict mode asks first, once per network (the answer is remembered
 *     under a hash of the gateway's MAC address); opportunistic mode starts
 *     the exception by itself;
 *   - it ends the moment an authenticated encrypted connection opens
 *     (`authenticated()`), when the network changes, or when the exception
 *     runs out. While it lasts it re-probes every 5 s and asks the encrypted
 *     upstream to try again; it never probes while all is well.
 *
 * This module is the session machine and its timers (detect → ask/allow →
 * expire/decline → leave, re-probing every 5 s while captive). The probes
 * are network/captive/probe.ts, their DNS client lookup.ts, the network we're
 * on and its remembered answer network/current-network.ts, the sentences
 * words.ts; the query path's side is gate.ts.
 */
import { EventEmitter } from 'node:events';
import { CleartextUpstream } from '../../upstream/plain/cleartext.js';
import { SignInProxy, type SignInProxyInfo } from './signin-proxy.js';
import { discoverCapportUrl, discoverNetworkResolver, type DiscoveryPaths, type NetworkResolver, SYSTEM_PATHS } from '../../network/network-resolver.js';
import type { CurrentNetwork } from '../../network/current-network.js';
import { lookupThrough } from './lookup.js';
import { CHECK_NAMES, detectPortal, type PortalVerdict, type ProbeTargets } from '../../network/captive/probe.js';
import { allowedSentence, captiveSentence, checkedSentence, detectedSentence, extendedSentence, hostOf, letThroughSentence, STRICT_NO_LOOKUP, WORDS, type ExceptionState } from './words.js';
import { sideCheck } from '../../runtime/side-check.js';

export interface CaptiveView {
  readonly portalUrl: string;
  readonly portalHost: string;
  readonly detectedBy: string;
  readonly detectedAt: number;
  /** How long detection took, ms. */
  readonly detectMs: number;
  readonly exception: ExceptionState;
  readonly expiresAt: number | null;
  /** Whether the user may still extend the exception (to 15 minutes in all). */
  readonly canExtend: boolean;
  /** The names that may be looked up in cleartext. */
  readonly allowedNames: readonly string[];
  /** Names actually answered in cleartext so far. */
  readonly letThrough: readonly string[];
  readonly networkResolver: string | null;
  /** The plain-words sentence for the banner and the privacy state. */
  readonly sentence: string;
}

export type CaptiveEvent =
  /** Detection ran and found no portal (open, or nothing conclusive): the ladder's classification stands. */
  | { readonly type: 'checked'; readonly at: number; readonly result: 'open' | 'unknown'; readonly tookMs: number; readonly sentence: string }
  | { readonly type: 'detected'; readonly at: number; readonly by: string; readonly portalHost: string; readonly tookMs: number; readonly sentence: string }
  | { readonly type: 'asking'; readonly at: number; readonly sentence: string }
  | { readonly type: 'allowed'; readonly at: number; readonly untilMs: number; readonly remembered: boolean; readonly sentence: string }
  | { readonly type: 'declined'; readonly at: number; readonly remembered: boolean; readonly sentence: string }
  | { readonly type: 'let-through'; readonly at: number; readonly name: string; readonly sentence: string }
  | { readonly type: 'signed-in'; readonly at: number; readonly sentence: string }
  | { readonly type: 'expired'; readonly at: number; readonly sentence: string }
  | { readonly type: 'left'; readonly at: number; readonly how: 'private' | 'network-changed' | 'portal-gone'; readonly afterMs: number; readonly sentence: string };

export interface CaptiveOptions {
  readonly probes: ProbeTargets;
  /** The user's network-DNS setting (`--network-dns`), read at each check; empty: discover it. */
  readonly networkDns: () => readonly string[];
  readonly paths?: DiscoveryPaths;
  readonly mode: () => 'strict' | 'opportunistic';
  /** The network we're on: its key, read when a portal is found, and strict mode's answer remembered for it. */
  readonly network: Pick<CurrentNetwork, 'current' | 'signInAnswer' | 'rememberSignIn'>;
  /** Ask the encrypted upstream to try connecting now (recovery while captive). */
  readonly retryEncrypted: () => void;
  /** An authenticated encrypted connection is open now: a portal verdict arriving after it is moot. */
  readonly encryptedWorks: () => boolean;
  readonly exceptionMs?: number;
  readonly maxExceptionMs?: number;
  readonly reprobeMs?: number;
  readonly now?: () => number;
}

const DEFAULT_EXCEPTION_MS = 5 * 60_000;
const MAX_EXCEPTION_MS = 15 * 60_000;
const REPROBE_MS = 5_000;

function normal(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

interface Session {
  readonly verdict: Extract<PortalVerdict, { kind: 'portal' }>;
  readonly detectedAt: number;
  readonly names: Set<string>;
  readonly letThrough: Set<string>;
  readonly resolver: NetworkResolver | null;
  readonly cleartext: CleartextUpstream | null;
  readonly key: string | null;
  exception: ExceptionState;
  /** The sign-in window's proxy while the exception is active. */
  proxy: SignInProxy | null;
  /** When the exception started (for extending to at most MAX_EXCEPTION_MS). */
  startedAt: number | null;
  expiresAt: number | null;
  openProbes: number;
  signedIn: boolean;
}

export class CaptivePortal extends EventEmitter<{ event: [CaptiveEvent]; change: [] }> {
  readonly #opts: CaptiveOptions;
  readonly #now: () => number;
  #session: Session | null = null;
  #checking: Promise<PortalVerdict | null> | null = null;
  #lastCheckAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #expiry: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Bumped by networkChanged()/stop(): a check started on the old network must not enter captive on the new one. */
  #generation = 0;

  constructor(opts: CaptiveOptions) {
    super();
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** In state `captive` (whatever the exception's state). */
  get active(): boolean {
    return this.#session !== null;
  }

  get checking(): boolean {
    return this.#checking !== null;
  }

  /** When detection last ran (ms since the epoch; -Infinity: never). */
  get lastCheckAt(): number {
    return this.#lastCheckAt;
  }

  get view(): CaptiveView | null {
    const s = this.#session;
    if (!s) return null;
    const portalHost = hostOf(s.verdict.portalUrl);
    return {
      portalUrl: s.verdict.portalUrl,
      portalHost,
      detectedBy: s.verdict.by,
      detectedAt: s.detectedAt,
      detectMs: s.verdict.tookMs,
      exception: s.exception,
      expiresAt: s.expiresAt,
      canExtend: s.exception === 'active' && s.startedAt !== null && (s.expiresAt ?? 0) - s.startedAt < (this.#opts.maxExceptionMs ?? MAX_EXCEPTION_MS),
      allowedNames: [...s.names].sort(),
      letThrough: [...s.letThrough].sort(),
      networkResolver: s.resolver ? s.resolver.servers.map((x) => x.host).join(', ') : null,
      sentence: captiveSentence(s.verdict.portalUrl, s.exception, s.resolver?.servers.map((x) => x.host).join(', ') ?? null),
    };
  }

  /** Whether `name` may go out in cleartext now. */
  allows(name: string): boolean {
    const s = this.#session;
    return s !== null && s.exception === 'active' && s.cleartext !== null && s.names.has(normal(name));
  }

  /** The cleartext path while the exception is active; null otherwise. */
  get cleartext(): CleartextUpstream | null {
    const s = this.#session;
    return s && s.exception === 'active' ? s.cleartext : null;
  }

  /** A name was answered in cleartext: the timeline shows each name once. */
  noteLetThrough(name: string): void {
    const s = this.#session;
    const n = normal(name);
    if (!s || s.letThrough.has(n)) return;
    s.letThrough.add(n);
    this.#emit({ type: 'let-through', at: this.#now(), name: n, sentence: letThroughSentence(n) });
    this.emit('change');
  }

  /**
   * Runs detection (at most one at a time). A portal enters `captive`; open
   * or unknown changes nothing. Resolves with the verdict (null if stopped).
   */
  check(): Promise<PortalVerdict | null> {
    if (this.#checking) return this.#checking;
    const generation = this.#generation;
    this.#lastCheckAt = this.#now();
    const resolver = discoverNetworkResolver(this.#opts.networkDns(), this.#opts.paths ?? SYSTEM_PATHS);
    const cleartext = resolver ? new CleartextUpstream({ servers: resolver.servers }) : null;
    const run = async (): Promise<PortalVerdict | null> => {
      // The CAPPORT API: given (--capport-url), else as the DHCP lease announced it (RFC 8910).
      const probes = this.#opts.probes.capportUrl ? this.#opts.probes : { ...this.#opts.probes, capportUrl: this.#opts.paths ? discoverCapportUrl(this.#opts.paths.leases) : discoverCapportUrl() };
      const consented = this.#mayLookUpInCleartext(null);
      const startedAt = this.#now();
      // Beside the query path: however the probes fail (a throw, a rejection, an exception from their sockets), the
      // check is "not checked", never the end of the proxy (runtime/side-check.ts).
      const measured = await sideCheck('the Wi-Fi sign-in check', () =>
        detectPortal(probes, cleartext && consented ? lookupThrough(cleartext) : null, {
          followRedirects: consented,
          ...(consented ? {} : { noLookupWhy: STRICT_NO_LOOKUP }),
        }),
      );
      if (this.#stopped || generation !== this.#generation) {
        cleartext?.destroy();
        return null;
      }
      if (!measured.ok) {
        cleartext?.destroy();
        this.#emit({ type: 'checked', at: this.#now(), result: 'unknown', tookMs: this.#now() - startedAt, sentence: `Sign-in page not checked: ${measured.why}` });
        return null;
      }
      const verdict = measured.value;
      if (verdict.kind === 'portal' && !this.#session && !this.#opts.encryptedWorks()) this.#enter(verdict, resolver, cleartext);
      else {
        cleartext?.destroy();
        if (verdict.kind !== 'portal') {
          this.#emit({ type: 'checked', at: this.#now(), result: verdict.kind, tookMs: verdict.tookMs, sentence: checkedSentence(verdict) });
        }
      }
      return verdict;
    };
    this.#checking = run().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  #enter(verdict: Extract<PortalVerdict, { kind: 'portal' }>, resolver: NetworkResolver | null, cleartext: CleartextUpstream | null): void {
    const names = new Set<string>([...CHECK_NAMES, ...verdict.hosts].map(normal));
    const key = this.#opts.network.current();
    const session: Session = {
      verdict,
      detectedAt: this.#now(),
      names,
      letThrough: new Set(),
      resolver,
      cleartext,
      key,
      exception: 'asking',
      proxy: null,
      startedAt: null,
      expiresAt: null,
      openProbes: 0,
      signedIn: false,
    };
    this.#session = session;
    this.#emit({ type: 'detected', at: this.#now(), by: verdict.by, portalHost: hostOf(verdict.portalUrl), tookMs: verdict.tookMs, sentence: detectedSentence(verdict) });
    this.#schedule();
    if (!cleartext) {
      session.exception = 'no-resolver';
    } else if (this.#opts.mode() === 'opportunistic') {
      this.#start(session, false);
    } else {
      const remembered = key ? this.#opts.network.signInAnswer(key) : undefined;
      if (remembered === 'allow') this.#start(session, true);
      else if (remembered === 'decline') {
        session.exception = 'declined';
        this.#emit({ type: 'declined', at: this.#now(), remembered: true, sentence: WORDS.declinedBefore });
      } else this.#emit({ type: 'asking', at: this.#now(), sentence: WORDS.asking });
    }
    this.emit('change');
  }

  #start(s: Session, remembered: boolean): void {
    const ms = this.#opts.exceptionMs ?? DEFAULT_EXCEPTION_MS;
    s.exception = 'active';
    this.#openProxy(s);
    s.startedAt = this.#now();
    s.expiresAt = s.startedAt + ms;
    this.#armExpiry(s);
    this.#emit({ type: 'allowed', at: this.#now(), untilMs: ms, remembered, sentence: allowedSentence(ms, remembered) });
  }

  /** The sign-in window's proxy, for the exception's lifetime (none without a network resolver). */
  #openProxy(s: Session): void {
    if (s.proxy || !s.cleartext) return;
    const proxy = new SignInProxy({ lookup: lookupThrough(s.cleartext), onHost: (h) => this.noteLetThrough(h) });
    s.proxy = proxy;
    proxy.listen().then(
      () => this.emit('change'),
      () => {
        if (s.proxy === proxy) s.proxy = null;
      },
    );
  }

  #closeProxy(s: Session): void {
    void s.proxy?.close();
    s.proxy = null;
  }

  /** Where the desktop app's sign-in window sends its requests (with the credential); null unless the exception is active. */
  get signInProxy(): SignInProxyInfo | null {
    const s = this.#session;
    return s && s.exception === 'active' && s.proxy?.ready ? s.proxy.info : null;
  }

  #armExpiry(s: Session): void {
    clearTimeout(this.#expiry);
    if (s.expiresAt === null) return;
    this.#expiry = setTimeout(() => {
      if (this.#session !== s || s.exception !== 'active') return;
      s.exception = 'expired';
      s.expiresAt = null;
      this.#closeProxy(s);
      this.#emit({ type: 'expired', at: this.#now(), sentence: WORDS.expired });
      this.emit('change');
    }, Math.max(0, s.expiresAt - this.#now()));
    this.#expiry.unref();
  }

  /** "Allow sign-in" (strict mode), or again after it expired or was declined. */
  allow(remember: boolean): boolean {
    const s = this.#session;
    if (!s || !s.cleartext || s.exception === 'active') return false;
    if (remember && s.key) this.#opts.network.rememberSignIn(s.key, 'allow');
    this.#start(s, false);
    // At once: the sign-in page's redirect chain is walked now that it may be looked up.
    void this.#reprobe();
    this.emit('change');
    return true;
  }

  /** "Not now": nothing in cleartext; remembered for this network when asked to. */
  decline(remember: boolean): boolean {
    const s = this.#session;
    if (!s) return false;
    if (remember && s.key) this.#opts.network.rememberSignIn(s.key, 'decline');
    s.exception = 'declined';
    s.expiresAt = null;
    this.#closeProxy(s);
    clearTimeout(this.#expiry);
    this.#emit({ type: 'declined', at: this.#now(), remembered: remember && s.key !== null, sentence: WORDS.declined });
    this.emit('change');
    return true;
  }

  /** Five more minutes, up to 15 in all. */
  extend(): boolean {
    const s = this.#session;
    if (!s || s.exception !== 'active' || s.startedAt === null || s.expiresAt === null) return false;
    const max = s.startedAt + (this.#opts.maxExceptionMs ?? MAX_EXCEPTION_MS);
    if (s.expiresAt >= max) return false;
    s.expiresAt = Math.min(max, s.expiresAt + (this.#opts.exceptionMs ?? DEFAULT_EXCEPTION_MS));
    this.#armExpiry(s);
    this.#emit({ type: 'allowed', at: this.#now(), untilMs: s.expiresAt - this.#now(), remembered: false, sentence: extendedSentence(s.expiresAt) });
    this.emit('change');
    return true;
  }

  /** An authenticated encrypted connection opened: private again. */
  authenticated(): void {
    this.#leave('private', WORDS.leftPrivate);
  }

  /** The network changed: the portal (and its exception) belonged to the old one. */
  networkChanged(): void {
    this.#generation++;
    this.#leave('network-changed', WORDS.leftNetwork);
  }

  #leave(how: 'private' | 'network-changed' | 'portal-gone', sentence: string): void {
    const s = this.#session;
    if (!s) return;
    this.#session = null;
    clearTimeout(this.#timer);
    clearTimeout(this.#expiry);
    this.#timer = undefined;
    // Cleartext answers are forgotten: none were cached, and the path itself goes.
    s.cleartext?.destroy();
    this.#closeProxy(s);
    this.#emit({ type: 'left', at: this.#now(), how, afterMs: this.#now() - s.detectedAt, sentence });
    this.emit('change');
  }

  /**
   * Whether a probe may look a name up in cleartext at the network's
   * resolver now. Opportunistic mode: yes. Strict mode: only once the user
   * allowed sign-in, now (`s` active) or remembered for this network; before
   * that, detection uses only what needs no name (the interception probe to
   * an address, a CAPPORT API at an address): not one cleartext packet the
   * user didn't agree to, re-probes and a declined question included.
   */
  #mayLookUpInCleartext(s: Session | null): boolean {
    if (this.#opts.mode() === 'opportunistic') return true;
    if (s) return s.exception === 'active';
    const key = this.#opts.network.current();
    return key !== null && this.#opts.network.signInAnswer(key) === 'allow';
  }

  /** Re-probe every 5 s while captive: notice the sign-in, and let the encrypted upstream try again. */
  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#reprobe(), this.#opts.reprobeMs ?? REPROBE_MS);
    this.#timer.unref();
  }

  async #reprobe(): Promise<void> {
    const s = this.#session;
    if (!s || this.#stopped) return;
    // Probing is for signing in: stop when nobody may sign in any more (the time ran out, or the user declined).
    if (s.exception === 'expired' || s.exception === 'declined') return;
    this.#opts.retryEncrypted();
    const consented = this.#mayLookUpInCleartext(s);
    const verdict = await detectPortal(this.#opts.probes, s.cleartext && consented ? lookupThrough(s.cleartext) : null, {
      followRedirects: consented,
      ...(consented ? {} : { noLookupWhy: STRICT_NO_LOOKUP }),
    });
    if (this.#session !== s) return;
    if (verdict.kind === 'portal') {
      s.openProbes = 0;
      let added = false;
      for (const h of verdict.hosts) {
        if (s.names.has(normal(h))) continue;
        s.names.add(normal(h));
        added = true;
      }
      if (added) this.emit('change');
    } else if (verdict.kind === 'open') {
      s.openProbes++;
      if (!s.signedIn) {
        s.signedIn = true;
        this.#emit({ type: 'signed-in', at: this.#now(), sentence: WORDS.signedIn });
        this.emit('change');
      }
      this.#opts.retryEncrypted();
      // Open twice and still no encrypted connection: the portal is gone, and what's left is the ladder's business.
      if (s.openProbes >= 3) {
        this.#leave('portal-gone', WORDS.leftPortalGone);
        return;
      }
    }
    this.#schedule();
  }

  #emit(e: CaptiveEvent): void {
    this.emit('event', e);
  }

  stop(): void {
    this.#stopped = true;
    this.#generation++;
    clearTimeout(this.#timer);
    clearTimeout(this.#expiry);
    this.#session?.cleartext?.destroy();
    if (this.#session) this.#closeProxy(this.#session);
    this.#session = null;
  }
}

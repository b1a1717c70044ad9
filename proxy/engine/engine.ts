/**
 * A query's path through the proxy: parse → upstream → the client's answer,
 * or a SERVFAIL. Never silence: every parseable query gets exactly one reply.
 *
 *   client ─► parse ─┬─ malformed or answered locally ─► FORMERR / NOTIMP / REFUSED / BADVERS (or drop: handle() returns false)
 *                    ├─ name router (router.ts): a link's name ─► that link's cleartext resolver; .local, unowned private reverse ─► NXDOMAIN
 *                    └─► upstream.resolve ─┬─ answer ─► restore ID, strip TLS-hop EDNS, TC if too big ─► client
 *                                          └─ typed error ─► SERVFAIL
 *
 * Deadlines, retries, RTT and connections belong to the upstream (see
 * upstream/upstream.ts): the engine only hands over a request and gets
 * exactly one result back.
 */
import { EventEmitter } from 'node:events';
import { encodeClientAnswer } from '../dns/client-answer.js';
import { parseClientQuery, shownType, type ClientQuery, type QuestionKey } from '../dns/client-query.js';
import { answerSigns, type AnswerSigns } from '../dns/extended-error.js';
import { CLASSIC_UDP_SIZE, rcodeName } from '../dns/header.js';
import { localAnswer, servfail } from '../dns/local-reply.js';
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import { encodeUpstreamQuery, queryBits, type UpstreamQuestion } from '../dns/upstream-query.js';
import { isDotstubError, type DotstubError } from '../errors.js';
import type { Upstream, UpstreamCallback, UpstreamRequest, UpstreamTrace } from '../upstream/upstream.js';
import { isOwnCheck, localVerdict } from './local-answers.js';
import { newCounters, type AnswerSource, type Counters, type QueryRecord, type RouteMark, type Transport } from './query-record.js';
import type { NameRouter } from './router.js';

export interface EngineOptions {
  /** EDNS padding of queries to 128-octet blocks (RFC 8467). */
  readonly padding: boolean;
  /** Record query names (off: records keep timings only). */
  readonly recordNames: boolean;
  /** Answer Firefox's DoH canary NXDOMAIN so its lookups stay on dotstub (local-answers.ts). */
  readonly keepBrowsersOnStub: boolean;
}

const NO_WIRE = Buffer.alloc(0);

/**
 * Where a job's query goes: answered here (no wire; `route` where the name
 * router decided that), to a link's resolver in cleartext (its wire, made
 * now), or to the encrypted resolver (encoded on first use, padded if
 * `pad`, the padding counted in `counters`). The encrypted one is the
 * engine's, made once per setting: the hot path allocates nothing for it.
 */
type Outgoing =
  | { readonly to: 'here'; readonly route?: RouteMark }
  | { readonly to: 'link'; readonly route: RouteMark; readonly wire: Buffer }
  | { readonly to: 'encrypted'; readonly pad: boolean; readonly counters: Counters };

const HERE: Outgoing = { to: 'here' };

export interface EngineEvents {
  query: [QueryRecord];
  malformed: [string];
}

export type Reply = (answer: Buffer) => void;

/**
 * One client query on its way; it is also the upstream request, its trace
 * and its question, so the hot path allocates one object where it made
 * four (issue 32: the hit path). Every job has the same shape (one class),
 * and the query for the resolver is encoded only when an upstream reads
 * `wire`: a cache hit never builds one (issue 23: it cost a padded
 * 130-octet buffer per hit), and the padding counted is what was really
 * sent.
 */
class Job implements UpstreamRequest, UpstreamTrace, UpstreamQuestion {
  readonly question: UpstreamQuestion = this;
  readonly trace: UpstreamTrace = this;
  readonly bits: number;
  // UpstreamQuestion
  readonly key: QuestionKey;
  readonly bytes: Buffer;
  // UpstreamTrace (newTrace()'s values), written by the upstream
  attempts = 0;
  resolverId: string | null = null;
  connectionId: number | null = null;
  reused: boolean | null = null;
  handshake: 'full' | 'resumed' | null = null;
  depth = 0;
  sentAt = 0;
  writtenAt = 0;
  cache: 'hit' | 'stale' | null = null;
  hedge: { readonly connectionId: number; readonly afterMs: number } | null = null;
  cleartext = false;
  /** Where the name router sent it, when not to the encrypted resolver. */
  readonly route: RouteMark | undefined;
  /** The wire, when known; null: encoded for the encrypted resolver on first use. */
  #wire: Buffer | null;
  readonly #pad: boolean;
  readonly #counters: Counters | null;

  constructor(
    readonly query: ClientQuery,
    readonly transport: Transport,
    readonly reply: Reply,
    /** performance.now() on arrival. */
    readonly receivedAt: number,
    /** Date.now() on arrival (UpstreamRequest.askedAt: the cache's clock for this query too). */
    readonly askedAt: number,
    out: Outgoing,
  ) {
    this.key = query.question;
    this.bytes = query.questionBytes;
    this.bits = queryBits(query);
    this.route = out.to === 'encrypted' ? undefined : out.route;
    this.#wire = out.to === 'encrypted' ? null : out.to === 'link' ? out.wire : NO_WIRE;
    this.#pad = out.to === 'encrypted' && out.pad;
    this.#counters = out.to === 'encrypted' ? out.counters : null;
  }

  get wire(): Buffer {
    if (this.#wire === null) {
      const { wire, padding } = encodeUpstreamQuery(this.query, { pad: this.#pad, keepalive: true });
      if (this.#counters) this.#counters.paddingBytes += padding;
      this.#wire = wire;
    }
    return this.#wire;
  }
}

export class Engine extends EventEmitter<EngineEvents> {
  /** Shared with the upstream, which writes its own fields (see upstream/counters.ts). */
  readonly counters: Counters;
  #options: EngineOptions;
  /** Where a query for the encrypted resolver goes, with this setting of padding (made again by configure). */
  #encrypted: Outgoing;
  #upstream: Upstream;
  #inFlight = 0;
  #seq = 0;
  #idleWaiters: (() => void)[] = [];
  #lastReceivedAt = 0;
  #onNextMessage: (() => void) | null = null;
  readonly #router: NameRouter | null;

  constructor(upstream: Upstream, options: EngineOptions, counters: Counters = newCounters(), router: NameRouter | null = null) {
    super();
    this.#upstream = upstream;
    this.#router = router;
    this.#options = options;
    this.counters = counters;
    this.#encrypted = { to: 'encrypted', pad: options.padding, counters };
  }

  get options(): EngineOptions {
    return this.#options;
  }

  /** Changes take effect with the next query. */
  configure(changes: Partial<EngineOptions>): void {
    this.#options = { ...this.#options, ...changes };
    this.#encrypted = { to: 'encrypted', pad: this.#options.padding, counters: this.counters };
  }

  /** New queries go to `upstream`; queries in flight finish where they are. */
  setUpstream(upstream: Upstream): void {
    this.#upstream = upstream;
  }

  /** Client queries received and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** When the last message from a client arrived (ms since the epoch; 0 if none). */
  get lastReceivedAt(): number {
    return this.#lastReceivedAt;
  }

  /**
   * Calls `fn` once, when the next message arrives (before it is handled):
   * what an idle process's housekeeping waits on instead of a timer
   * (runtime/idle-collect.ts). One waiter; a second call replaces the first.
   */
  onNextMessage(fn: () => void): void {
    this.#onNextMessage = fn;
  }

  #nextMessageArrived(): void {
    const fn = this.#onNextMessage;
    this.#onNextMessage = null;
    fn?.();
  }

  /** Resolves when every received query has been answered. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Handles one message from a client. True: `reply` is called exactly once
   * (perhaps already); false: the message is dropped and `reply` never called.
   */
  handle(raw: Buffer, transport: Transport, reply: Reply): boolean {
    if (this.#onNextMessage !== null) this.#nextMessageArrived();
    // performance.now(): a double, no BigInt allocation on the hot path.
    const receivedAt = performance.now();
    const wallNow = Date.now();
    this.#lastReceivedAt = wallNow;
    const parsed = parseClientQuery(raw, transport);
    if (!parsed.ok) {
      this.counters.malformed++;
      this.emit('malformed', parsed.reason);
      if (!parsed.reply) return false;
      reply(parsed.reply);
      return true;
    }
    const query = parsed.query;
    const local = localVerdict(query, this.#options);
    // dotstub's own checks are counted apart (their records are tagged in #record).
    if (local !== null && isOwnCheck(query.question.name)) this.counters.internalChecks++;
    else this.counters.queries++;
    if (local) {
      this.counters.localAnswers++;
      const job = new Job(query, transport, reply, receivedAt, wallNow, HERE);
      this.#inFlight++;
      this.#finish(job, localAnswer(query, local), 'local', local, false, null);
      return true;
    }
    const routed = this.#router?.pick(query.question.name, query.question.type);
    if (routed && routed.kind !== 'public') {
      if (routed.kind === 'link') {
        // The owning link's resolver, in cleartext: no padding or keepalive (they'd only make it stand out).
        const { wire } = encodeUpstreamQuery(query, { pad: false, keepalive: false });
        const job = new Job(query, transport, reply, receivedAt, wallNow, { to: 'link', route: routed.mark, wire });
        this.counters.localNames++;
        this.#inFlight++;
        routed.upstream.resolve(job, this.#onResult);
        return true;
      }
      const job = new Job(query, transport, reply, receivedAt, wallNow, { to: 'here', route: routed.mark });
      this.#inFlight++;
      if (routed.kind === 'nxdomain') {
        this.counters.localAnswers++;
        this.#finish(job, localAnswer(query, 'NXDOMAIN'), 'local', 'NXDOMAIN', false, null);
      } else {
        this.counters.servfails++;
        this.#finish(job, servfail(query), 'servfail', 'SERVFAIL', false, 'DOTSTUB_LOCAL_NAMES_NOT_ALLOWED');
      }
      return true;
    }
    const job = new Job(query, transport, reply, receivedAt, wallNow, this.#encrypted);
    this.#inFlight++;
    this.#upstream.resolve(job, this.#onResult);
    return true;
  }

  /** The one callback for every upstream result; the job is the context. */
  readonly #onResult: UpstreamCallback<Job> = (job, err, answer) => {
    if (answer) this.#onAnswer(job, answer);
    else this.#finishServfail(job, err);
  };

  #onAnswer(job: Job, answer: UpstreamAnswer): void {
    const maxSize = job.transport === 'udp' ? (job.query.edns?.udpSize ?? CLASSIC_UDP_SIZE) : 65535;
    // Why it may be blocked, read before the answer is relayed (encodeClientAnswer may patch its OPT in place), and only for someone listening.
    const signs = this.listenerCount('query') > 0 ? answerSigns(answer.raw, answer.optStart, answer.optEnd, answer.opt?.endToEndOptions === true) : null;
    const { buf, truncated } = encodeClientAnswer(job.query, answer, maxSize);
    if (truncated) this.counters.truncated++;
    this.counters.answers++;
    if (job.trace.reused) this.counters.connectionHits++;
    const cache = job.trace.cache;
    const source: AnswerSource = cache === 'hit' ? 'cache' : cache === 'stale' ? 'stale' : job.trace.cleartext ? 'cleartext' : 'upstream';
    this.#finish(job, buf, source, rcodeName(answer.rcode), truncated, null, signs);
  }

  #finishServfail(job: Job, err: DotstubError | null): void {
    this.counters.servfails++;
    const code = isDotstubError(err) ? err.code : 'DOTSTUB_INTERNAL';
    this.#finish(job, servfail(job.query), 'servfail', 'SERVFAIL', false, code);
  }

  #finish(job: Job, buf: Buffer, source: AnswerSource, rcode: string, truncated: boolean, error: string | null, signs: AnswerSigns | null = null): void {
    const answeredAt = performance.now();
    job.reply(buf);
    this.#inFlight--;
    // Records cost allocations: build them only for someone listening.
    if (this.listenerCount('query') > 0) this.emit('query', this.#record(job, source, rcode, truncated, error, answeredAt, signs));
    if (this.#inFlight === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  #record(job: Job, source: AnswerSource, rcode: string, truncated: boolean, error: string | null, answeredAt: number, signs: AnswerSigns | null): QueryRecord {
    const t: UpstreamTrace = job;
    const record: { -readonly [K in keyof QueryRecord]: QueryRecord[K] } = {
      seq: ++this.#seq,
      startedAt: job.askedAt,
      name: this.#options.recordNames ? job.query.question.name : null,
      type: shownType(job.query.question.type),
      transport: job.transport,
      rcode,
      resolverId: t.connectionId === null ? null : t.resolverId,
      connectionId: t.connectionId,
      reused: t.reused,
      handshake: t.handshake,
      latencyUs: Math.round((answeredAt - job.receivedAt) * 1000),
      queueUs: t.writtenAt > 0 && t.sentAt > 0 ? Math.max(0, Math.round((t.writtenAt - t.sentAt) * 1000)) : 0,
      upstreamUs: t.writtenAt > 0 ? Math.round((answeredAt - t.writtenAt) * 1000) : 0,
      depth: t.depth,
      source,
      attempts: t.attempts,
      truncated,
      error,
    };
    // Added to the one object (a spread would copy it, on every query).
    if (job.route) record.route = job.route;
    if (t.hedge) record.hedge = t.hedge;
    if (signs?.extendedErrors) record.extendedErrors = signs.extendedErrors;
    if (signs?.blocked) record.blocked = signs.blocked;
    // A later attempt counted (a retry, a held query, a hedge's copy): its queue and upstream times start when it was sent, so the time before is said apart.
    if (t.sentAt > 0 && (t.attempts > 1 || (t.hedge !== null && t.connectionId === t.hedge.connectionId))) record.earlierUs = Math.max(0, Math.round((t.sentAt - job.receivedAt) * 1000));
    // Only a locally answered name can be one of dotstub's own checks: the hot path pays one comparison.
    if (source === 'local' && isOwnCheck(job.query.question.name)) record.internal = true;
    return record;
  }
}

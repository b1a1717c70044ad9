/**
 * A query's path through the proxy: parse → upstream (with its deadline and
 * one retry) → the client's answer, or a SERVFAIL. Never silence: every
 * parseable query gets exactly one reply.
 *
 *   client ─► parse ─┬─ malformed or answered locally ─► FORMERR / NOTIMP / REFUSED / BADVERS (or drop: handle() returns false)
 *                    └─► pool.send ─┬─ answer ─► restore ID, strip TLS-hop EDNS, TC if too big ─► client
 *                                   ├─ closed / deadline ─► retry once on another connection ─► … ─► SERVFAIL
 *                                   └─ backpressure / resolver unreachable ─► SERVFAIL at once
 */
import { EventEmitter } from 'node:events';
import type { AnswerHandler, DotConnection } from '../upstream/dot/connection.js';
import { isDotstubError, QueryTimeoutError, type DotstubError } from '../errors.js';
import type { AnswerSource, Counters, QueryRecord, Transport } from './query-record.js';
import { newCounters } from './query-record.js';
import type { Pool } from '../upstream/pool.js';
import {
  CLASSIC_UDP_SIZE,
  encodeClientAnswer,
  encodeUpstreamQuery,
  parseClientQuery,
  rcodeName,
  servfail,
  type ClientQuery,
  type UpstreamAnswer,
  type UpstreamQuestion,
} from '../dns/wire.js';

export interface EngineOptions {
  /** EDNS padding of queries to 128-octet blocks (RFC 8467). */
  padding: boolean;
  /** Record query names (off: records keep timings only). */
  recordNames: boolean;
}

export interface EngineEvents {
  query: [QueryRecord];
  malformed: [string];
}

export type Reply = (answer: Buffer) => void;

interface Job {
  readonly query: ClientQuery;
  readonly transport: Transport;
  readonly reply: Reply;
  readonly wire: Buffer;
  readonly upstreamQuestion: UpstreamQuestion;
  readonly receivedAt: number;
  readonly startedAt: number;
  attempts: number;
  /** The pool of the current attempt (queries in flight stay on theirs across a switch). */
  pool: Pool | undefined;
  connection: DotConnection | undefined;
  upstreamId: number;
  reused: boolean | null;
  depth: number;
  sentAt: number;
  /** Deadline slot of the current attempt (-1: none). */
  deadlineKey: number;
  /** Guards against a late callback after the job was answered. */
  done: boolean;
}

/**
 * Deadlines are kept in 25 ms slots, one timer per slot rather than one per
 * query: at 20k queries/s that is ~40 timers/s instead of 20,000, and a
 * deadline fires at most 25 ms late.
 */
const DEADLINE_SLOT_MS = 25;

const RETRIABLE = new Set(['DOTSTUB_CONNECTION_CLOSED', 'DOTSTUB_QUERY_TIMEOUT']);

export class Engine extends EventEmitter<EngineEvents> {
  readonly counters: Counters = newCounters();
  readonly options: EngineOptions;
  #pool: Pool;
  #inFlight = 0;
  #seq = 0;
  #idleWaiters: (() => void)[] = [];
  #lastReceivedAt = 0;

  constructor(pool: Pool, options: EngineOptions) {
    super();
    this.#pool = pool;
    this.options = options;
  }

  get pool(): Pool {
    return this.#pool;
  }

  /** New queries (and retries) go to `pool`; queries in flight finish where they are. */
  setPool(pool: Pool): void {
    this.#pool = pool;
  }

  /** Client queries received and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** When the last message from a client arrived (ms since the epoch; 0 if none). */
  get lastReceivedAt(): number {
    return this.#lastReceivedAt;
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
    this.counters.queries++;
    const query = parsed.query;
    const { wire, padding } = encodeUpstreamQuery(query, { pad: this.options.padding, keepalive: true });
    this.counters.paddingBytes += padding;
    const job: Job = {
      query,
      transport,
      reply,
      wire,
      upstreamQuestion: { key: query.question, bytes: query.questionBytes },
      receivedAt,
      startedAt: wallNow,
      attempts: 0,
      pool: undefined,
      connection: undefined,
      upstreamId: -1,
      reused: null,
      depth: 0,
      sentAt: 0,
      deadlineKey: -1,
      done: false,
    };
    this.#inFlight++;
    this.#attempt(job);
    return true;
  }

  /** The one handler for every upstream result; `job` is the context. */
  readonly #onUpstream: AnswerHandler<Job> = (job, conn, upstreamId, err, answer, writtenAt) => {
    // A late result for an attempt that was already given up on.
    if (job.done || job.connection !== conn || job.upstreamId !== upstreamId) return;
    this.#clearDeadline(job);
    if (err) this.#onError(job, err);
    else this.#onAnswer(job, answer as UpstreamAnswer, writtenAt || job.sentAt);
  };

  #attempt(job: Job): void {
    job.attempts++;
    const pool = this.#pool;
    try {
      // A retry gets its own copy: the first may still sit in a socket's write queue.
      const wire = job.attempts === 1 ? job.wire : Buffer.from(job.wire);
      const sent = pool.send(wire, job.upstreamQuestion, this.#onUpstream, job, job.connection);
      job.pool = pool;
      job.connection = sent.connection;
      job.upstreamId = sent.upstreamId;
      job.reused = sent.reused;
      job.depth = sent.depth;
      job.sentAt = performance.now();
      this.#armDeadline(job, job.sentAt + pool.queryTimeoutMs());
    } catch (err) {
      if (isDotstubError(err) && err.code === 'DOTSTUB_IN_FLIGHT_CAP') this.counters.inFlightCapHits++;
      this.#finishServfail(job, err);
    }
  }

  /** Live queries by deadline slot; a query leaves its slot as soon as it is answered, so nothing done is retained. */
  readonly #deadlines = new Map<number, Set<Job>>();

  #clearDeadline(job: Job): void {
    if (job.deadlineKey === -1) return;
    this.#deadlines.get(job.deadlineKey)?.delete(job);
    job.deadlineKey = -1;
  }

  #armDeadline(job: Job, at: number): void {
    const key = Math.ceil(at / DEADLINE_SLOT_MS);
    job.deadlineKey = key;
    let slot = this.#deadlines.get(key);
    if (!slot) {
      slot = new Set();
      this.#deadlines.set(key, slot);
      // unref: a live query always has a socket keeping the process up.
      setTimeout(this.#expireSlot, Math.max(1, key * DEADLINE_SLOT_MS - performance.now()), key).unref();
    }
    slot.add(job);
  }

  readonly #expireSlot = (key: number): void => {
    const slot = this.#deadlines.get(key);
    this.#deadlines.delete(key);
    if (!slot) return;
    for (const job of slot) {
      if (!job.done && job.deadlineKey === key && job.connection) {
        job.deadlineKey = -1;
        this.#onTimeout(job, job.connection, job.upstreamId);
      }
    }
  };

  #onTimeout(job: Job, conn: DotConnection, upstreamId: number): void {
    if (job.done) return;
    this.counters.timeouts++;
    const writtenAt = conn.writtenAt(upstreamId);
    conn.cancel(upstreamId);
    // Nothing at all came back since this query was written: the connection is
    // dead (black-holed path, silent middlebox). Close it so the others move on.
    if (writtenAt !== 0 && conn.lastReceiveAt < writtenAt && conn.state === 'open') conn.close('unresponsive');
    this.#onError(job, new QueryTimeoutError(`no answer from ${conn.address} within the deadline`));
  }

  #onError(job: Job, err: DotstubError): void {
    if (job.done) return;
    if (job.attempts < 2 && RETRIABLE.has(err.code)) {
      this.counters.retries++;
      this.#attempt(job);
      return;
    }
    this.#finishServfail(job, err);
  }

  #onAnswer(job: Job, answer: UpstreamAnswer, writtenAt: number): void {
    const now = performance.now();
    job.pool?.observeRtt(now - writtenAt);
    const maxSize = job.transport === 'udp' ? (job.query.edns?.udpSize ?? CLASSIC_UDP_SIZE) : 65535;
    const { buf, truncated } = encodeClientAnswer(job.query, answer, maxSize);
    if (truncated) this.counters.truncated++;
    this.counters.answers++;
    if (job.reused) this.counters.connectionHits++;
    this.#finish(job, buf, 'upstream', rcodeName(answer.rcode), truncated, null, writtenAt, now);
  }

  #finishServfail(job: Job, err: unknown): void {
    this.counters.servfails++;
    const code = isDotstubError(err) ? err.code : 'DOTSTUB_INTERNAL';
    this.#finish(job, servfail(job.query), 'servfail', 'SERVFAIL', false, code, 0, performance.now());
  }

  #finish(
    job: Job,
    buf: Buffer,
    source: AnswerSource,
    rcode: string,
    truncated: boolean,
    error: string | null,
    writtenAt: number,
    answeredAt: number,
  ): void {
    job.done = true;
    this.#clearDeadline(job);
    job.reply(buf);
    this.#inFlight--;
    // Records cost allocations: build them only for someone listening.
    if (this.listenerCount('query') > 0) this.emit('query', this.#record(job, source, rcode, truncated, error, writtenAt, answeredAt));
    if (this.#inFlight === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  #record(
    job: Job,
    source: AnswerSource,
    rcode: string,
    truncated: boolean,
    error: string | null,
    writtenAt: number,
    answeredAt: number,
  ): QueryRecord {
    const conn = job.connection;
    const handshake = conn && job.reused === false && conn.handshake ? (conn.handshake.resumed ? 'resumed' : 'full') : null;
    const sentAt = job.sentAt;
    return {
      seq: ++this.#seq,
      startedAt: job.startedAt,
      name: this.options.recordNames ? job.query.question.name : null,
      type: job.query.question.type,
      transport: job.transport,
      rcode,
      resolverId: conn ? conn.resolver.id : null,
      connectionId: conn ? conn.id : null,
      reused: job.reused,
      handshake,
      latencyUs: Math.round((answeredAt - job.receivedAt) * 1000),
      queueUs: writtenAt > 0 && sentAt > 0 ? Math.max(0, Math.round((writtenAt - sentAt) * 1000)) : 0,
      upstreamUs: writtenAt > 0 ? Math.round((answeredAt - writtenAt) * 1000) : 0,
      depth: job.depth,
      source,
      attempts: job.attempts,
      truncated,
      error,
    };
  }
}

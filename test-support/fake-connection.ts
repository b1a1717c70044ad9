/**
 * A PoolConnection the test drives, for policy tests of the pool and of what
 * composes pools (fallback): no sockets. `open()`, `refuse()`, `answer()` and
 * `close()` do to it what a server or a network would.
 */
import { EventEmitter } from 'node:events';
import { readUpstreamAnswer, type UpstreamAnswer } from '../proxy/dns/upstream-answer.js';
import type { UpstreamQuestion } from '../proxy/dns/upstream-query.js';
import { ConnectionClosedError, type DotstubError } from '../proxy/errors.js';
import type {
  AnswerHandler,
  CloseReason,
  ConnectionSpec,
  ConnectionState,
  HandshakeInfo,
  PeerVerdict,
  PoolConnection,
  PoolConnectionEvents,
  SendInfo,
} from '../proxy/upstream/connection/contract.js';
import { answerTo } from './upstream-requests.js';

interface Sent {
  readonly id: number;
  readonly wire: Buffer;
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  /** performance.now() when "written": at send on an open connection, else when it opened (0 until then). */
  writtenAt: number;
}

export class FakeConnection extends EventEmitter<PoolConnectionEvents> implements PoolConnection {
  readonly createdAt = Date.now();
  state: ConnectionState = 'connecting';
  queriesCarried = 0;
  handshake: HandshakeInfo | undefined;
  keepaliveMs: number | undefined;
  readonly idleTimeoutMs = 60_000;
  lastAnswerAt = 0;
  /** What its peer's TCP does with what it is sent: a fake that doesn't answer is a lost path unless a test says the resolver is thinking. */
  peer: PeerVerdict = 'silent';
  readonly ackEvidence = 'tcp';
  readonly sent = new Map<number, Sent>();
  #nextId = 1;

  constructor(
    readonly spec: ConnectionSpec,
    readonly cap: number,
  ) {
    super();
  }
  get id(): number {
    return this.spec.id;
  }
  get address(): string {
    return this.spec.address;
  }
  get inFlight(): number {
    return this.sent.size;
  }
  get available(): boolean {
    return (this.state === 'connecting' || this.state === 'open') && this.sent.size < this.cap;
  }
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    if (!this.available) return null;
    const id = this.#nextId++;
    framed.writeUInt16BE(id, 2);
    this.sent.set(id, { id, wire: framed, question, handler: handler as AnswerHandler<unknown>, ctx, writtenAt: this.state === 'open' ? performance.now() : 0 });
    this.queriesCarried++;
    return { connection: this, upstreamId: id, reused: this.state === 'open', depth: this.sent.size };
  }
  cancel(id: number): void {
    this.sent.delete(id);
  }
  peerSilence(): Promise<PeerVerdict> {
    return Promise.resolve(this.state === 'open' || this.state === 'draining' ? this.peer : 'acking');
  }
  writtenAt(id: number): number {
    return this.sent.get(id)?.writtenAt ?? 0;
  }
  drain(): void {
    if (this.sent.size === 0) this.close('local');
    else this.state = 'draining';
  }
  close(reason: CloseReason = 'local'): void {
    this.#end(reason, undefined, this.state !== 'connecting');
  }

  // What the test does to it:
  open(resumed = false, ticket?: Buffer, classicalOnly: HandshakeInfo['classicalOnly'] = null): void {
    this.state = 'open';
    for (const s of this.sent.values()) if (s.writtenAt === 0) s.writtenAt = performance.now();
    this.handshake = { connectionId: this.id, address: this.address, resumed, verified: true, authError: null, tlsVersion: 'TLSv1.3', cipher: 'x', keyGroup: 'X25519', classicalOnly, handshakeMs: 1 };
    this.emit('ready', this.handshake);
    if (ticket) this.emit('session', ticket);
  }
  refuse(error: DotstubError): void {
    this.#end('error', error, false);
  }
  answerAll(): void {
    for (const s of [...this.sent.values()]) this.answer(s.id);
  }
  answer(id: number): void {
    const s = this.sent.get(id);
    if (!s) return;
    this.sent.delete(id);
    this.lastAnswerAt = performance.now();
    const answer: UpstreamAnswer = readUpstreamAnswer(answerTo(s.wire), s.question);
    s.handler(s.ctx, this, id, null, answer, s.writtenAt);
    if (this.state === 'draining' && this.sent.size === 0) this.close('local');
  }
  #end(reason: CloseReason, error: DotstubError | undefined, wasOpen: boolean): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    const pending = [...this.sent.values()];
    this.sent.clear();
    this.emit('close', { connectionId: this.id, reason, error, failed: pending.length, queriesCarried: this.queriesCarried, wasOpen });
    const closed = new ConnectionClosedError(`closed (${reason})`);
    for (const s of pending) s.handler(s.ctx, this, s.id, closed, undefined, s.writtenAt);
  }
}

/**
 * The queries in flight on one connection, keyed by the connection's own ID
 * for each (never the client's: RFC 7858 §3.3 and RFC 5452 want an
 * unpredictable ID per query, and two clients may use the same one). DoT
 * puts the ID on the wire and matches answers by it; DoH writes ID 0 and
 * matches by stream, the ID naming the query to the pool.
 *
 *   add() ── fresh ID, not in use ──► entries (Map: insertion = send order, first = oldest)
 *   match(answer) ── ID known? ── question echoed? ──► the entry, taken out
 *                       │ no            │ no
 *                       ▼               ▼
 *                  'unknown'        'mismatch' (entry stays: its deadline decides)
 *   take(id) ── its stream ended (DoH): the entry, taken out
 *   cancel(id) ── deadline passed: taken out, a late answer is then 'unknown'
 *   failAll() ── connection gone: every entry taken out and returned
 *
 * Invariant: an entry leaves the map exactly once (match, take, cancel or failAll),
 * so its owner settles it exactly once.
 */
import crypto from 'node:crypto';
import type { QuestionKey } from '../../dns/client-query.js';
import { readUpstreamAnswer, type UpstreamAnswer } from '../../dns/upstream-answer.js';
import type { UpstreamQuestion } from '../../dns/upstream-query.js';
import { QuestionMismatchError } from '../../errors.js';

export interface InFlightEntry {
  readonly question: UpstreamQuestion;
}

export type MatchResult<E> =
  | { readonly kind: 'answer'; readonly entry: E; readonly answer: UpstreamAnswer; readonly outOfOrder: boolean }
  /** Late answer to a cancelled query, or an ID we never sent. */
  | { readonly kind: 'unknown' }
  /** The answer doesn't echo the question (or is unreadable): dropped, the query stays pending. */
  | { readonly kind: 'mismatch'; readonly asked: QuestionKey; readonly got: QuestionKey | undefined };

export class InFlightMap<E extends InFlightEntry> {
  readonly #entries = new Map<number, E>();
  #nextId: number = crypto.randomInt(0, 65536);

  get size(): number {
    return this.#entries.size;
  }

  /** Stores `entry` under a fresh ID not in use on this connection and returns the ID. At most 65,536 entries. */
  add(entry: E): number {
    if (this.#entries.size >= 65536) throw new RangeError('all 65,536 message IDs are in flight');
    let id = this.#nextId;
    while (this.#entries.has(id)) id = (id + 1) & 0xffff;
    this.#nextId = (id + 1) & 0xffff;
    this.#entries.set(id, entry);
    return id;
  }

  get(id: number): E | undefined {
    return this.#entries.get(id);
  }

  /** IDs and entries in send order. */
  entries(): IterableIterator<[number, E]> {
    return this.#entries.entries();
  }

  /** Matches an answer (a whole DNS message) to its query and takes the entry out. */
  match(raw: Buffer): MatchResult<E> {
    if (raw.length < 2) return { kind: 'unknown' };
    const id = raw.readUInt16BE(0);
    const entry = this.#entries.get(id);
    if (!entry) return { kind: 'unknown' };
    let answer: UpstreamAnswer;
    try {
      answer = readUpstreamAnswer(raw, entry.question);
    } catch (err) {
      return { kind: 'mismatch', asked: entry.question.key, got: err instanceof QuestionMismatchError ? err.got : undefined };
    }
    const outOfOrder = !this.isOldest(id);
    this.#entries.delete(id);
    return { kind: 'answer', entry, answer, outOfOrder };
  }

  /** The query sent first among those still in flight. */
  isOldest(id: number): boolean {
    return this.#entries.keys().next().value === id;
  }

  /** Takes an entry out (its outcome is known); undefined if it had already left. */
  take(id: number): E | undefined {
    const entry = this.#entries.get(id);
    if (entry) this.#entries.delete(id);
    return entry;
  }

  /** Takes a query back (its deadline passed); false if it had already left. */
  cancel(id: number): boolean {
    return this.#entries.delete(id);
  }

  /** Empties the map, returning what was in it in send order, with IDs. */
  failAll(): [number, E][] {
    const all = [...this.#entries];
    this.#entries.clear();
    return all;
  }
}

/**
 * The query log: a ring buffer of the last N QueryRecords with filters,
 * paging (newest first) and export (CSV, JSON).
 *
 * Data structure: a ring of slots used circularly. `#next` is where the next
 * record goes; the newest is at `#next - 1`, the oldest at `#next - size`
 * (mod capacity). Appends are O(1) and never allocate once full; queries
 * scan newest → oldest, O(size), which at the 100k cap is a few ms.
 *
 * Memory (issue 23): a slot is not the record the engine made but its
 * fields copied into two arrays — numbers (the enumerations packed into one
 * of them) in an array of doubles, which V8 stores unboxed, and the strings
 * (shared: the type, rcode and resolver id are the same few strings; only
 * names differ) in another — in blocks of BLOCK slots, allocated as the log
 * fills. A QueryRecord kept whole cost ~215 B of V8 heap beside its name (a
 * 168 B object and boxed doubles); a slot costs 120 B, and the record the
 * engine made dies young instead of being promoted to V8's old generation,
 * which at 2,000 q/s grew it by ~0.5 MB/s until its next full collection.
 * Plain arrays rather than typed ones: their bytes stay in V8's heap, which
 * compacts, rather than in malloc's, which doesn't. Readers get records
 * rebuilt from the slots (equal, not the same objects).
 *
 * dotstub's own checks (issue 29): the system-DNS watchdog asks its liveness
 * name twice a second, 7,200 lookups an hour, which in one ring were 72 % of
 * a 10,000-row log on an idle desktop and left the user about an hour of
 * their own history. They go to a ring of their own, OWN_CHECKS_KEPT long
 * (a few minutes of them, enough to see the watchdog's last answers when
 * looking into an outage), so the user's ring holds only the user's lookups
 * and no number of own checks evicts one of them. Readers see the user's
 * ring alone unless they ask for the own checks too (`includeOwn`), and then
 * both rings merged newest first.
 */
import { isBlockingCode } from '../dns/extended-error.js';
import type { AnswerSource, BlockSign, ExtendedError, QueryRecord, RouteMark, Transport } from '../engine/query-record.js';

export interface QueryFilter {
  /** Case-insensitive substring of the name; records without a name never match. */
  readonly name?: string | undefined;
  readonly type?: string | undefined;
  readonly rcode?: string | undefined;
  readonly resolver?: string | undefined;
  readonly minLatencyMs?: number | undefined;
  /** Where the name router sent it: 'link' (a network's own resolver, unencrypted), 'answered' or 'refused' here, 'local' (any of them). */
  readonly route?: RouteFilter | undefined;
  /** Include dotstub's own checks (records tagged `internal`); left out by default. */
  readonly includeOwn?: boolean | undefined;
  /** Only answers that read as blocked (QueryRecord.blocked): 'resolver' when the resolver said so (an EDE), 'null-address' when it answered 0.0.0.0 or ::, 'any' for both. */
  readonly blocked?: BlockedFilter | undefined;
}

export const BLOCKED_FILTERS = ['any', 'resolver', 'null-address'] as const;
export type BlockedFilter = (typeof BLOCKED_FILTERS)[number];

/** Whether a record passes the blocked filter (the dashboard's in-memory filter, renderer/src/lib/filters.ts, does the same). */
function matchesBlocked(r: Pick<QueryRecord, 'blocked'>, f: BlockedFilter): boolean {
  if (r.blocked === undefined) return false;
  return f === 'any' || (f === 'resolver') === (r.blocked.kind === 'ede');
}

export const ROUTE_FILTERS = ['link', 'answered', 'refused', 'local'] as const;
export type RouteFilter = (typeof ROUTE_FILTERS)[number];

export interface QueryLogPage {
  readonly total: number;
  readonly offset: number;
  readonly records: readonly QueryRecord[];
}

/** dotstub's own checks kept: ~8 minutes of the watchdog's two a second, 1 block (~120 KB). */
export const OWN_CHECKS_KEPT = 1024;

/** Slots per block: a block is allocated when the log first needs it (an idle proxy's empty log costs nothing). */
const BLOCK = 1024;

// Numbers (NUMS per slot, CODES the enumerations packed: 4 bits each) and references (REFS per slot).
const NUMS = 10;
/** EARLIER: the record's earlierUs, NaN when absent (the first attempt counted). */
const [SEQ, STARTED, CONN, LATENCY, QUEUE, UPSTREAM, DEPTH, ATTEMPTS, CODES, EARLIER] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
const [TRANSPORT, REUSED, HANDSHAKE, SOURCE, FLAGS] = [0, 4, 8, 12, 16] as const;
const REFS = 7;
/**
 * ROUTE holds the route mark or the hedge: a routed query never reaches a pool, so never both.
 * SIGNS holds the answer's EDEs (an array), its block sign (an object with `kind`), or, rarely
 * (a null-address answer with an EDE that blocks nothing), both in a Signs object; undefined for neither.
 */
const [NAME, TYPE, RCODE, RESOLVER, ERROR, ROUTE, SIGNS] = [0, 1, 2, 3, 4, 5, 6] as const;
type Hedge = NonNullable<QueryRecord['hedge']>;
interface Signs {
  readonly extendedErrors: readonly ExtendedError[];
  readonly blocked: BlockSign;
}
type SignsSlot = readonly ExtendedError[] | BlockSign | Signs | undefined;

function signsSlot(r: QueryRecord): SignsSlot {
  const e = r.extendedErrors;
  const b = r.blocked;
  if (e === undefined) return b;
  // A blocking EDE is the block sign: the dashboard's record is rebuilt from the array alone.
  if (b === undefined || (b.kind === 'ede' && e.some((x) => x.code === b.code && x.text === b.text))) return e;
  return { extendedErrors: e, blocked: b };
}

const TRANSPORTS: readonly Transport[] = ['udp', 'tcp'];
const REUSED_VALUES: readonly (boolean | null)[] = [null, false, true];
const HANDSHAKES: readonly QueryRecord['handshake'][] = [null, 'full', 'resumed'];
/** Each AnswerSource's code (a Record, so a source added to the type must be added here). */
const SOURCE_CODES: Readonly<Record<AnswerSource, number>> = { upstream: 0, cache: 1, stale: 2, servfail: 3, 'error-reply': 4, local: 5, cleartext: 6 };
const SOURCES = Object.keys(SOURCE_CODES) as AnswerSource[];
const TRUNCATED = 1;
const INTERNAL = 2;

class Block {
  /** Filled with a double so V8 keeps the array's elements as unboxed doubles from the start. */
  readonly nums: number[] = new Array<number>(BLOCK * NUMS).fill(0.5);
  readonly refs: (string | RouteMark | Hedge | SignsSlot | null)[] = new Array<string | RouteMark | Hedge | SignsSlot | null>(BLOCK * REFS).fill(undefined);
}

/** One ring of slots (the layout above). */
class Ring {
  #capacity: number;
  #blocks: Block[] = [];
  #next = 0;
  #size = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  get size(): number {
    return this.#size;
  }

  push(r: QueryRecord): void {
    const i = this.#next;
    const b = this.#blocks[Math.floor(i / BLOCK)] ?? this.#grow();
    const o = i % BLOCK;
    const n = o * NUMS;
    b.nums[n + SEQ] = r.seq;
    b.nums[n + STARTED] = r.startedAt;
    b.nums[n + CONN] = r.connectionId ?? Number.NaN;
    b.nums[n + LATENCY] = r.latencyUs;
    b.nums[n + QUEUE] = r.queueUs;
    b.nums[n + UPSTREAM] = r.upstreamUs;
    b.nums[n + DEPTH] = r.depth;
    b.nums[n + ATTEMPTS] = r.attempts;
    b.nums[n + EARLIER] = r.earlierUs ?? Number.NaN;
    b.nums[n + CODES] =
      ((r.transport === 'tcp' ? 1 : 0) << TRANSPORT) |
      ((r.reused === null ? 0 : r.reused ? 2 : 1) << REUSED) |
      ((r.handshake === null ? 0 : r.handshake === 'full' ? 1 : 2) << HANDSHAKE) |
      (SOURCE_CODES[r.source] << SOURCE) |
      (((r.truncated ? TRUNCATED : 0) | (r.internal ? INTERNAL : 0)) << FLAGS);
    const s = o * REFS;
    b.refs[s + NAME] = r.name;
    b.refs[s + TYPE] = r.type;
    b.refs[s + RCODE] = r.rcode;
    b.refs[s + RESOLVER] = r.resolverId;
    b.refs[s + ERROR] = r.error;
    b.refs[s + ROUTE] = r.route ?? r.hedge;
    b.refs[s + SIGNS] = signsSlot(r);
    this.#next = (i + 1) % this.#capacity;
    if (this.#size < this.#capacity) this.#size++;
  }

  /** Newest first. */
  *newest(): Generator<QueryRecord> {
    const cap = this.#capacity;
    for (let i = 1; i <= this.#size; i++) yield this.#record((this.#next - i + cap) % cap);
  }

  /** Changes the capacity, keeping the newest records that fit. */
  resize(capacity: number): void {
    if (capacity === this.#capacity) return;
    const keep = [...this.newest()].slice(0, capacity).reverse();
    this.#capacity = capacity;
    this.clear();
    for (const r of keep) this.push(r);
  }

  /** Drops the names of every stored record (the user turned name recording off). */
  forgetNames(): void {
    for (const b of this.#blocks) {
      for (let s = NAME; s < b.refs.length; s += REFS) if (b.refs[s] !== undefined) b.refs[s] = null;
    }
  }

  clear(): void {
    this.#blocks = [];
    this.#next = 0;
    this.#size = 0;
  }

  /** The next block: slots fill in order until the first wrap, so a missing block is always the next one. */
  #grow(): Block {
    const b = new Block();
    this.#blocks.push(b);
    return b;
  }

  /** The record in slot i, rebuilt (same fields, in the engine's order). */
  #record(i: number): QueryRecord {
    const b = this.#blocks[Math.floor(i / BLOCK)] as Block;
    const o = i % BLOCK;
    const n = o * NUMS;
    const s = o * REFS;
    const conn = b.nums[n + CONN] as number;
    const codes = b.nums[n + CODES] as number;
    const code = (at: number): number => (codes >> at) & 0xf;
    const flags = code(FLAGS);
    const routeOrHedge = b.refs[s + ROUTE] as RouteMark | Hedge | undefined;
    const r: { -readonly [K in keyof QueryRecord]: QueryRecord[K] } = {
      seq: b.nums[n + SEQ] as number,
      startedAt: b.nums[n + STARTED] as number,
      name: b.refs[s + NAME] as string | null,
      type: b.refs[s + TYPE] as string,
      transport: TRANSPORTS[code(TRANSPORT)] as Transport,
      rcode: b.refs[s + RCODE] as string,
      resolverId: b.refs[s + RESOLVER] as string | null,
      connectionId: Number.isNaN(conn) ? null : conn,
      reused: REUSED_VALUES[code(REUSED)] as boolean | null,
      handshake: HANDSHAKES[code(HANDSHAKE)] as QueryRecord['handshake'],
      latencyUs: b.nums[n + LATENCY] as number,
      queueUs: b.nums[n + QUEUE] as number,
      upstreamUs: b.nums[n + UPSTREAM] as number,
      depth: b.nums[n + DEPTH] as number,
      source: SOURCES[code(SOURCE)] as AnswerSource,
      attempts: b.nums[n + ATTEMPTS] as number,
      truncated: (flags & TRUNCATED) !== 0,
      error: b.refs[s + ERROR] as string | null,
    };
    if (flags & INTERNAL) r.internal = true;
    const earlier = b.nums[n + EARLIER] as number;
    if (!Number.isNaN(earlier)) r.earlierUs = earlier;
    if (routeOrHedge !== undefined) {
      if ('kind' in routeOrHedge) r.route = routeOrHedge;
      else r.hedge = routeOrHedge;
    }
    const signs = b.refs[s + SIGNS] as SignsSlot;
    if (signs !== undefined) {
      if (isErrors(signs)) {
        r.extendedErrors = signs;
        const said = signs.find((e) => isBlockingCode(e.code));
        if (said) r.blocked = { kind: 'ede', ...said };
      } else if ('kind' in signs) {
        r.blocked = signs;
      } else {
        r.extendedErrors = signs.extendedErrors;
        r.blocked = signs.blocked;
      }
    }
    return r;
  }
}

function isErrors(s: NonNullable<SignsSlot>): s is readonly ExtendedError[] {
  return Array.isArray(s);
}

/**
 * The query log: the user's lookups in a ring of `capacity` (the logSize
 * setting), dotstub's own checks in a ring of OWN_CHECKS_KEPT beside it.
 */
export class QueryLog {
  readonly #user: Ring;
  readonly #own = new Ring(OWN_CHECKS_KEPT);

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`query log capacity must be a positive integer, got ${capacity}`);
    this.#user = new Ring(capacity);
  }

  /** How many of the user's lookups the log keeps. */
  get capacity(): number {
    return this.#user.capacity;
  }

  /** The user's lookups held (own checks not included). */
  get size(): number {
    return this.#user.size;
  }

  /** dotstub's own checks held (at most OWN_CHECKS_KEPT). */
  get ownSize(): number {
    return this.#own.size;
  }

  push(r: QueryRecord): void {
    (r.internal ? this.#own : this.#user).push(r);
  }

  /** Newest first: the user's lookups, with dotstub's own checks merged in (by seq) when `includeOwn`. */
  *newest(includeOwn = false): Generator<QueryRecord> {
    if (!includeOwn || this.#own.size === 0) {
      yield* this.#user.newest();
      return;
    }
    const a = this.#user.newest();
    const b = this.#own.newest();
    let x = a.next();
    let y = b.next();
    while (!x.done || !y.done) {
      if (y.done || (!x.done && x.value.seq > y.value.seq)) {
        yield x.value as QueryRecord;
        x = a.next();
      } else {
        yield y.value;
        y = b.next();
      }
    }
  }

  /** Changes how many of the user's lookups are kept, keeping the newest that fit. */
  resize(capacity: number): void {
    this.#user.resize(capacity);
  }

  /** Drops the names of every stored record (the user turned name recording off). */
  forgetNames(): void {
    this.#user.forgetNames();
    this.#own.forgetNames();
  }

  clear(): void {
    this.#user.clear();
    this.#own.clear();
  }

  *filter(f: QueryFilter): Generator<QueryRecord> {
    const name = f.name ? f.name.toLowerCase() : undefined;
    const type = f.type ? f.type.toUpperCase() : undefined;
    const rcode = f.rcode ? f.rcode.toUpperCase() : undefined;
    const minUs = f.minLatencyMs !== undefined ? f.minLatencyMs * 1000 : undefined;
    for (const r of this.newest(f.includeOwn === true)) {
      if (name !== undefined && (r.name === null || !r.name.toLowerCase().includes(name))) continue;
      if (type !== undefined && r.type.toUpperCase() !== type) continue;
      if (rcode !== undefined && r.rcode.toUpperCase() !== rcode) continue;
      if (f.resolver !== undefined && f.resolver !== '' && r.resolverId !== f.resolver) continue;
      if (minUs !== undefined && r.latencyUs < minUs) continue;
      if (f.route !== undefined && (r.route === undefined || (f.route !== 'local' && r.route.kind !== f.route))) continue;
      if (f.blocked !== undefined && !matchesBlocked(r, f.blocked)) continue;
      yield r;
    }
  }

  page(f: QueryFilter, offset: number, limit: number): QueryLogPage {
    const records: QueryRecord[] = [];
    let total = 0;
    for (const r of this.filter(f)) {
      if (total >= offset && records.length < limit) records.push(r);
      total++;
    }
    return { total, offset, records };
  }

}

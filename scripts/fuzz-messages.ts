/**
 * What the fuzzer sends: random bytes, valid queries mutated at random, and
 * structured malformations aimed at each check of a DNS parser (RFC 1035
 * §4.1, RFC 6891 §6.1). Deterministic from a seed, so a run can be replayed.
 */

/** mulberry32: a small, fast, seedable PRNG; returns [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)] as T;

function nameBytes(labels: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [];
  for (const l of labels) {
    const b = typeof l === 'string' ? Buffer.from(l, 'latin1') : l;
    parts.push(Buffer.from([b.length]), b);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

const TYPES = [1, 28, 16, 15, 2, 5, 6, 12, 33, 255, 41, 249, 250, 251, 252, 253, 254, 65, 64, 0, 65535];

function opt(version = 0, udpSize = 1232, options: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(11 + options.length);
  b[0] = 0;
  b.writeUInt16BE(41, 1);
  b.writeUInt16BE(udpSize, 3);
  b[5] = 0;
  b[6] = version;
  b.writeUInt16BE(0, 7);
  b.writeUInt16BE(options.length, 9);
  options.copy(b, 11);
  return b;
}

export interface QueryParts {
  readonly id?: number;
  readonly flags?: number;
  readonly name?: Buffer;
  readonly qtype?: number;
  readonly qclass?: number;
  readonly additional?: readonly Buffer[];
  readonly counts?: readonly [number, number, number, number];
}

/** A query from parts; counts default to what is there. */
export function buildQuery(p: QueryParts): Buffer {
  const name = p.name ?? nameBytes(['n1', 'test']);
  const additional = p.additional ?? [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(p.id ?? 0, 0);
  header.writeUInt16BE(p.flags ?? 0x0100, 2);
  const counts = p.counts ?? [1, 0, 0, additional.length];
  counts.forEach((c, i) => header.writeUInt16BE(c & 0xffff, 4 + i * 2));
  const q = Buffer.alloc(4);
  q.writeUInt16BE(p.qtype ?? 1, 0);
  q.writeUInt16BE(p.qclass ?? 1, 2);
  return Buffer.concat([header, name, q, ...additional]);
}

/** A well-formed query for one of the zone's names (or a random one), with or without EDNS. */
export function validQuery(r: Rand, names: number): Buffer {
  const labels: (string | Buffer)[] = r() < 0.8 ? [`n${int(r, names)}`, 'test'] : [Buffer.from(Array.from({ length: 1 + int(r, 20) }, () => int(r, 256))), 'test'];
  return buildQuery({
    id: int(r, 65536),
    flags: r() < 0.9 ? 0x0100 : int(r, 65536) & 0x0110,
    name: nameBytes(labels),
    qtype: r() < 0.7 ? 1 : pick(r, TYPES),
    additional: r() < 0.6 ? [opt(0, 512 + int(r, 4096))] : [],
  });
}

/** Random edits of a valid query: bit flips, overwritten octets, cuts, tails, lying counts. */
export function mutatedQuery(r: Rand, names: number): Buffer {
  let b = Buffer.from(validQuery(r, names));
  for (let n = 1 + int(r, 4); n > 0; n--) {
    const what = int(r, 6);
    if (what === 0 && b.length > 0) {
      const i = int(r, b.length);
      b[i] = (b[i] as number) ^ (1 << int(r, 8));
    } else if (what === 1 && b.length > 0) {
      b[int(r, b.length)] = int(r, 256);
    } else if (what === 2) {
      b = b.subarray(0, int(r, b.length + 1));
    } else if (what === 3) {
      b = Buffer.concat([b, Buffer.from(Array.from({ length: int(r, 40) }, () => int(r, 256)))]);
    } else if (what === 4 && b.length >= 12) {
      b.writeUInt16BE(pick(r, [0, 1, 2, 3, 255, 0xffff]), 4 + 2 * int(r, 4));
    } else if (b.length >= 4) {
      // Header flags: QR, opcode, TC, Z, rcode.
      b.writeUInt16BE(b.readUInt16BE(2) ^ (1 << int(r, 16)), 2);
    }
  }
  return b;
}

/** One malformation aimed at one check. */
export function structuredMalformed(r: Rand, names: number): Buffer {
  const id = int(r, 65536);
  const base = (): QueryParts => ({ id, name: nameBytes([`n${int(r, names)}`, 'test']) });
  switch (int(r, 20)) {
    case 0: // a response sent as a query
      return buildQuery({ ...base(), flags: 0x8180 });
    case 1: // another opcode
      return buildQuery({ ...base(), flags: (1 + int(r, 15)) << 11 });
    case 2: // no question, two, or 65535
      return buildQuery({ ...base(), counts: [pick(r, [0, 2, 0xffff]), 0, 0, 0] });
    case 3: // shorter than a question can be
      return buildQuery(base()).subarray(0, 12 + int(r, 5));
    case 4: // a label length with the reserved top bits (0x40-0xbf)
      return buildQuery({ ...base(), name: Buffer.from([0x40 + int(r, 0x80), 0x61, 0x62, 0]) });
    case 5: // a compression pointer to itself (a loop) or forward
      return buildQuery({ ...base(), name: Buffer.from([1, 0x61, 0xc0, pick(r, [12, 14, 200])]) });
    case 6: {
      // a name longer than 255 octets
      const labels = Array.from({ length: 5 }, () => 'x'.repeat(63));
      return buildQuery({ ...base(), name: nameBytes(labels) });
    }
    case 7: // record counts with no records behind them
      return buildQuery({ ...base(), counts: [1, int(r, 65536), int(r, 65536), int(r, 65536)] });
    case 8: // two OPT records
      return buildQuery({ ...base(), additional: [opt(), opt()] });
    case 9: // OPT in the answer section
      return buildQuery({ ...base(), additional: [opt()], counts: [1, 1, 0, 0] });
    case 10: // EDNS version ≠ 0
      return buildQuery({ ...base(), additional: [opt(1 + int(r, 255))] });
    case 11: {
      // OPT owned by a name, not the root
      const o = opt();
      return buildQuery({ ...base(), additional: [Buffer.concat([Buffer.from([1, 0x61]), o])] });
    }
    case 12: {
      // an RDLENGTH running past the end
      const o = opt();
      o.writeUInt16BE(1000 + int(r, 60000), 9);
      return buildQuery({ ...base(), additional: [o] });
    }
    case 13: // meta query types
      return buildQuery({ ...base(), qtype: pick(r, [41, 249, 250, 251, 252, 253, 254]), additional: r() < 0.5 ? [opt()] : [] });
    case 14: // a random class and type
      return buildQuery({ ...base(), qtype: int(r, 65536), qclass: int(r, 65536) });
    case 15: // octets ≥ 0x80 and dots inside labels (legal: forwarded as sent)
      return buildQuery({ ...base(), name: nameBytes([Buffer.from([0x80 + int(r, 128), 0x2e, 0xff]), 'test']) });
    case 16: // nothing but a header
      return buildQuery(base()).subarray(0, 12);
    case 17: // EDNS options with lying lengths
      return buildQuery({ ...base(), additional: [opt(0, 1232, Buffer.from([0, 10, 0xff, 0xff, 1, 2]))] });
    case 18: // an empty datagram or a few octets
      return Buffer.alloc(int(r, 12), int(r, 256));
    default: // a UDP size below 512 and a huge one
      return buildQuery({ ...base(), additional: [opt(0, pick(r, [0, 1, 511, 65535]))] });
  }
}

export function randomBytes(r: Rand): Buffer {
  const n = r() < 0.1 ? int(r, 12) : int(r, 600);
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = int(r, 256);
  return b;
}

/** One fuzz message: 25 % random, 35 % mutated, 30 % structured malformed, 10 % valid. */
export function fuzzMessage(r: Rand, names: number): Buffer {
  const x = r();
  if (x < 0.25) return randomBytes(r);
  if (x < 0.6) return mutatedQuery(r, names);
  if (x < 0.9) return structuredMalformed(r, names);
  return validQuery(r, names);
}

/**
 * Garbage a resolver must reject without forwarding: random bytes and the
 * header-level malformations (responses, other opcodes, question counts,
 * truncations); nothing that reaches the upstream.
 */
export function malformedMessage(r: Rand): Buffer {
  const x = r();
  if (x < 0.3) {
    const b = randomBytes(r);
    // Random bytes are a plausible query 1 time in 2^10 or so; make sure they are not (QR set).
    if (b.length > 2) b[2] = (b[2] as number) | 0x80;
    return b;
  }
  const id = int(r, 65536);
  const name = nameBytes([`n${int(r, 100)}`, 'test']);
  switch (int(r, 6)) {
    case 0:
      return buildQuery({ id, name, flags: 0x8180 });
    case 1:
      return buildQuery({ id, name, flags: (1 + int(r, 15)) << 11 });
    case 2:
      return buildQuery({ id, name, counts: [pick(r, [0, 2, 0xffff]), 0, 0, 0] });
    case 3:
      return buildQuery({ id, name }).subarray(0, 12 + int(r, 5));
    case 4:
      return Buffer.alloc(int(r, 12), int(r, 256));
    default:
      return buildQuery({ id, name: Buffer.from([1, 0x61, 0xc0, 12]) });
  }
}

/**
 * Domain names on the wire (RFC 1035 §3.1, §4.1.4), walked in place: where
 * a name ends, with or without compression pointers, and its presentation
 * form. Nothing here decodes a name into labels or allocates, except
 * presentName's string (one, for a plain name: see plainName). Every walk
 * in dns/ that skips a name uses these; upstream-answer.ts's matchQuestion
 * walks the answer's question name itself, comparing it label by label with
 * the query's as it goes.
 *
 * Invariants: a walk never reads past the message and never loops (a
 * pointer must point before the one that led to it); a malformed name is
 * -1, never an exception.
 */

/**
 * The end of the uncompressed name at `offset`, or -1 when it runs past the
 * message, has a label over 63 octets, is longer than 255 octets (RFC 1035
 * §3.1), or uses a compression pointer or an extended label type.
 */
export function uncompressedNameEnd(raw: Buffer, offset: number): number {
  const start = offset;
  for (;;) {
    if (offset >= raw.length) return -1;
    const len = raw[offset] as number;
    if (len === 0) return offset + 1 - start > 255 ? -1 : offset + 1;
    if (len > 63) return -1;
    offset += 1 + len;
  }
}

/**
 * The end of the (possibly compressed) name at `offset` in the message, or
 * -1 when it is malformed. Pointers must point backwards (RFC 1035 §4.1.4),
 * which also rules out loops.
 */
export function nameEnd(raw: Buffer, offset: number): number {
  let end = -1;
  let limit = offset;
  let total = 0;
  for (;;) {
    if (offset >= raw.length) return -1;
    const len = raw[offset] as number;
    if (len === 0) return end === -1 ? offset + 1 : end;
    if (len >= 0xc0) {
      if (offset + 1 >= raw.length) return -1;
      const target = ((len & 0x3f) << 8) | (raw[offset + 1] as number);
      if (end === -1) end = offset + 2;
      if (target >= limit) return -1;
      limit = target;
      offset = target;
      continue;
    }
    if (len > 63) return -1;
    total += len + 1;
    if (total > 255) return -1;
    offset += 1 + len;
  }
}

/** Where presentName lays out a plain name before reading it as one string (a name is at most 255 octets). */
const PLAIN_NAME = Buffer.alloc(256);

/** RFC 1035 §5.1 presentation form of an uncompressed name (for logs and errors): `\.`, `\\` and `\DDD` escapes. */
export function presentName(raw: Buffer, offset: number): string {
  if (raw[offset] === 0) return '.';
  // Every query's name is made a string (issue 32: the hit path): a plain
  // name, as nearly all are, is laid out with its dots and read in one call,
  // one flat string, instead of a string per label and their concatenation.
  const n = plainName(raw, offset);
  if (n > 0) return PLAIN_NAME.toString('latin1', 0, n);
  let out = '';
  for (;;) {
    const len = raw[offset] as number;
    if (len === 0 || offset + len >= raw.length + 1) return out;
    if (out !== '') out += '.';
    const end = offset + 1 + len;
    let plain = true;
    for (let i = offset + 1; i < end; i++) {
      const c = raw[i] as number;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) {
        plain = false;
        break;
      }
    }
    if (plain) out += raw.toString('latin1', offset + 1, end);
    else {
      for (let i = offset + 1; i < end; i++) {
        const c = raw[i] as number;
        if (c === 0x2e || c === 0x5c) out += '\\' + String.fromCharCode(c);
        else if (c <= 0x20 || c >= 0x7f) out += '\\' + String(c).padStart(3, '0');
        else out += String.fromCharCode(c);
      }
    }
    offset = end;
  }
}

/**
 * Lays out the name at `offset` in PLAIN_NAME as `label.label`: its length,
 * or 0 when a label has an octet presentation would escape, or the name is
 * cut short (presentName's general path then handles it).
 */
function plainName(raw: Buffer, offset: number): number {
  let n = 0;
  for (;;) {
    if (offset >= raw.length) return 0;
    const len = raw[offset] as number;
    if (len === 0) return n;
    const end = offset + 1 + len;
    if (len > 63 || end > raw.length || n + len + 1 > PLAIN_NAME.length) return 0;
    if (n > 0) PLAIN_NAME[n++] = 0x2e;
    for (let i = offset + 1; i < end; i++) {
      const c = raw[i] as number;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) return 0;
      PLAIN_NAME[n++] = c;
    }
    offset = end;
  }
}

/** ASCII-only case folding of one octet (RFC 4343 §3: octets outside A-Z compare exactly). */
export function foldAscii(c: number): number {
  // One unsigned comparison and no branch (0x20 added to A-Z only): it runs
  // for every octet of every question hashed or compared, where the two
  // comparisons and a branch cost 2x (issue 32: the hit path).
  return c + ((((c - 0x41) >>> 0) < 26 ? 1 : 0) << 5);
}

/**
 * SVCB records (RFC 9460), as DDR (RFC 9462) needs them: the RDATA of a
 * `_dns.resolver.arpa` answer read into a designation. dns-packet (5.6)
 * doesn't know type 64: it hands the RDATA over as bytes, and this reads
 * them. No I/O.
 *
 *   SvcPriority (2 octets) | TargetName (uncompressed, RFC 9460 §2.2) | SvcParams
 *   SvcParam: key (2) | length (2) | value
 *
 * Keys must come in strictly increasing order and each value must fit its
 * length exactly (§2.2): a record that breaks either is malformed and
 * refused as a whole, never half read. Keys this doesn't know are skipped
 * (§8: a client ignores them), but a `mandatory` list naming one it doesn't
 * know makes the record unusable (§8), so it is refused too.
 */

/** The SVCB resource record type (RFC 9460 §14.2). */
export const TYPE_SVCB = 64;

export interface SvcbRecord {
  /** 0: alias form (no parameters, not a designation); 1..65535: service form, lower first. */
  readonly priority: number;
  /** The designated resolver's name, lower case, without the trailing dot; '' for the root ('.': "the owner name", never a resolver's). */
  readonly target: string;
  readonly alpn: readonly string[];
  /** Absent: the protocol's default port (853 for DoT, 443 for DoH). */
  readonly port?: number;
  readonly ipv4hint: readonly string[];
  readonly ipv6hint: readonly string[];
  /** DoH's URI template (RFC 9461 §5), e.g. `/dns-query{?dns}`. */
  readonly dohpath?: string;
}

export class SvcbFormatError extends Error {}

const KEY = { mandatory: 0, alpn: 1, noDefaultAlpn: 2, port: 3, ipv4hint: 4, ech: 5, ipv6hint: 6, dohpath: 7 } as const;
const KNOWN: ReadonlySet<number> = new Set(Object.values(KEY));

/** Reads one SVCB RDATA; throws SvcbFormatError with what is wrong. */
export function parseSvcb(rdata: Uint8Array): SvcbRecord {
  const b = Buffer.from(rdata.buffer, rdata.byteOffset, rdata.byteLength);
  if (b.length < 3) throw new SvcbFormatError(`SVCB record of ${b.length} octets is too short`);
  const priority = b.readUInt16BE(0);
  let at = 2;
  const labels: string[] = [];
  for (;;) {
    const len = b[at];
    if (len === undefined) throw new SvcbFormatError('SVCB target name runs past the record');
    if (len === 0) {
      at++;
      break;
    }
    // RFC 9460 §2.2: the target is never compressed; a pointer here is malformed.
    if (len > 63) throw new SvcbFormatError('SVCB target name is compressed or has a label over 63 octets');
    if (at + 1 + len > b.length) throw new SvcbFormatError('SVCB target name runs past the record');
    labels.push(b.toString('latin1', at + 1, at + 1 + len).toLowerCase());
    at += 1 + len;
  }
  const target = labels.join('.');
  if (target.length > 253) throw new SvcbFormatError('SVCB target name is longer than 253 characters');
  const out: { -readonly [K in keyof SvcbRecord]: SvcbRecord[K] } = { priority, target, alpn: [], ipv4hint: [], ipv6hint: [] };
  let last = -1;
  let mandatory: number[] = [];
  while (at < b.length) {
    if (at + 4 > b.length) throw new SvcbFormatError('SVCB parameter header runs past the record');
    const key = b.readUInt16BE(at);
    const len = b.readUInt16BE(at + 2);
    at += 4;
    if (key <= last) throw new SvcbFormatError(`SVCB parameter keys out of order (key${key} after key${last})`);
    last = key;
    if (at + len > b.length) throw new SvcbFormatError(`SVCB parameter key${key} runs past the record`);
    const v = b.subarray(at, at + len);
    at += len;
    if (key === KEY.mandatory) {
      if (len === 0 || len % 2) throw new SvcbFormatError('SVCB mandatory list has a bad length');
      mandatory = Array.from({ length: len / 2 }, (_, i) => v.readUInt16BE(i * 2));
    } else if (key === KEY.alpn) {
      out.alpn = alpnList(v);
    } else if (key === KEY.port) {
      if (len !== 2) throw new SvcbFormatError('SVCB port is not 2 octets');
      out.port = v.readUInt16BE(0);
    } else if (key === KEY.ipv4hint) {
      if (len === 0 || len % 4) throw new SvcbFormatError('SVCB ipv4hint is not a list of addresses');
      out.ipv4hint = Array.from({ length: len / 4 }, (_, i) => Array.from(v.subarray(i * 4, i * 4 + 4)).join('.'));
    } else if (key === KEY.ipv6hint) {
      if (len === 0 || len % 16) throw new SvcbFormatError('SVCB ipv6hint is not a list of addresses');
      out.ipv6hint = Array.from({ length: len / 16 }, (_, i) => ipv6(v.subarray(i * 16, i * 16 + 16)));
    } else if (key === KEY.dohpath) {
      const path = v.toString('utf8');
      if (!path.startsWith('/')) throw new SvcbFormatError('SVCB dohpath is not a path');
      out.dohpath = path;
    }
  }
  const unknown = mandatory.find((k) => !KNOWN.has(k));
  if (unknown !== undefined) throw new SvcbFormatError(`SVCB record makes key${unknown} mandatory, which this client does not know`);
  return out;
}

/** RFC 9460 §7.1.1: length-prefixed protocol ids. */
function alpnList(v: Buffer): string[] {
  const ids: string[] = [];
  let at = 0;
  while (at < v.length) {
    const len = v[at] as number;
    if (len === 0 || at + 1 + len > v.length) throw new SvcbFormatError('SVCB alpn list is malformed');
    ids.push(v.toString('latin1', at + 1, at + 1 + len));
    at += 1 + len;
  }
  if (ids.length === 0) throw new SvcbFormatError('SVCB alpn list is empty');
  return ids;
}

function ipv6(b: Buffer): string {
  const groups = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16));
  // The longest run of zero groups (two or more) becomes '::' (RFC 5952).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

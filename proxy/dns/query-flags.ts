/**
 * The bits of a query that change its answer and so belong in a cache key
 * (RFC 4035 §3.2: DO asks for DNSSEC records, CD for unvalidated data;
 * RFC 6840 §5.7: AD asks for the AD bit without DO),
 * read from the framed upstream query the engine built (wire.ts
 * encodeUpstreamQuery: length, header, one question, then OPT).
 */
const FLAG_AD = 0x0020;
const FLAG_CD = 0x0010;

export function queryCacheBits(framed: Buffer): { readonly dnssecOk: boolean; readonly checkingDisabled: boolean; readonly authenticData: boolean } {
  const checkingDisabled = framed.length >= 6 && (framed.readUInt16BE(4) & FLAG_CD) !== 0;
  const authenticData = framed.length >= 6 && (framed.readUInt16BE(4) & FLAG_AD) !== 0;
  let dnssecOk = false;
  // Find the OPT record after the question: skip the question's labels.
  let offset = 2 + 12;
  if (framed.length > offset && framed.readUInt16BE(12) >= 1) {
    while (offset < framed.length) {
      const len = framed[offset] as number;
      if (len === 0) {
        offset += 1;
        break;
      }
      if (len >= 0xc0) {
        offset += 2;
        break;
      }
      offset += 1 + len;
    }
    offset += 4; // QTYPE, QCLASS
    // OPT: root name (1), TYPE (2), CLASS = UDP size (2), TTL = ext-rcode (1), version (1), flags (2): DO is the top bit.
    if (offset + 9 <= framed.length && framed[offset] === 0 && framed.readUInt16BE(offset + 1) === 41) {
      dnssecOk = (framed.readUInt16BE(offset + 7) & 0x8000) !== 0;
    }
  }
  return { dnssecOk, checkingDisabled, authenticData };
}

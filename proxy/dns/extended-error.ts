/**
 * Why a resolver refused a name, read from its answer: the Extended DNS
 * Errors it attached (RFC 8914: EDNS option 15, INFO-CODE and EXTRA-TEXT),
 * and the other common way to block, an A or AAAA answer of 0.0.0.0 or ::
 * (the "null route" of most blocklist resolvers and hosts files), which
 * carries no EDE at all.
 *
 * Read in place, before the answer is relayed (client-answer.ts may patch
 * the OPT in place); the answer's bytes are never changed here, so the EDE
 * reaches the client as the resolver wrote it. Nothing here throws: a cut
 * or malformed option is not an EDE.
 *
 * The names travel in the records (ExtendedError.name): whoever shows one
 * needs no table.
 */
import { HEADER_LENGTH, OPTION_EXTENDED_ERROR, TYPE_OPT } from './header.js';
import { nameEnd } from './name.js';
import { RECORD_FIXED_LENGTH, recordEnd, recordFixedAt } from './record.js';

/**
 * One Extended DNS Error (RFC 8914 §2): its INFO-CODE, the code's
 * registered name (carried so the API's readers, the dashboard and the CSV
 * need no table of their own) and the EXTRA-TEXT (UTF-8, '' when none).
 */
export interface ExtendedError {
  readonly code: number;
  readonly name: string;
  readonly text: string;
}

/** Why an answer reads as a block: the resolver said so (an EDE of 15-18), or it answered the null address. */
export type BlockSign =
  | ({ readonly kind: 'ede' } & ExtendedError)
  | { readonly kind: 'zero-address'; readonly address: '0.0.0.0' | '::' };

/**
 * INFO-CODEs by name (IANA "Extended DNS Error Codes": RFC 8914 §4 for
 * 0-24, later registrations after).
 */
const EDE_NAMES: readonly string[] = [
  'Other Error',
  'Unsupported DNSKEY Algorithm',
  'Unsupported DS Digest Type',
  'Stale Answer',
  'Forged Answer',
  'DNSSEC Indeterminate',
  'DNSSEC Bogus',
  'Signature Expired',
  'Signature Not Yet Valid',
  'DNSKEY Missing',
  'RRSIGs Missing',
  'No Zone Key Bit Set',
  'NSEC Missing',
  'Cached Error',
  'Not Ready',
  'Blocked',
  'Censored',
  'Filtered',
  'Prohibited',
  'Stale NXDOMAIN Answer',
  'Not Authoritative',
  'Not Supported',
  'No Reachable Authority',
  'Network Error',
  'Invalid Data',
  'Signature Expired before Valid',
  'Too Early',
  'Unsupported NSEC3 Iterations Value',
  'Unable to conform to policy',
  'Synthesized',
  'Invalid Query Type',
];

/** An INFO-CODE's registered name ("Blocked"); "code 4711" for one not (yet) registered. */
export function extendedErrorName(code: number): string {
  return EDE_NAMES[code] ?? `code ${code}`;
}

/** The INFO-CODEs that say the resolver refused the name on purpose (RFC 8914 §4.16-4.19). */
export function isBlockingCode(code: number): boolean {
  return code >= 15 && code <= 18;
}

/** EXTRA-TEXT kept at most this long: it is shown and logged, and a resolver could send 64 KB of it. */
export const MAX_EXTRA_TEXT = 256;

const TYPE_A = 1;
const TYPE_AAAA = 28;
const decoder = new TextDecoder('utf-8');

/**
 * The EDEs in the OPT record at [optStart, optEnd) of `raw`, in the order
 * sent; [] when none (or the OPT is malformed). EXTRA-TEXT is decoded as
 * UTF-8 (bad octets become U+FFFD), a trailing NUL some servers add dropped,
 * cut to MAX_EXTRA_TEXT characters.
 */
export function readExtendedErrors(raw: Buffer, optStart: number, optEnd: number): ExtendedError[] {
  const out: ExtendedError[] = [];
  if (optStart < 0) return out;
  const fixed = recordFixedAt(raw, optStart);
  if (fixed === -1 || raw.readUInt16BE(fixed) !== TYPE_OPT) return out;
  let at = fixed + RECORD_FIXED_LENGTH;
  const end = Math.min(optEnd, raw.length);
  while (at + 4 <= end) {
    const code = raw.readUInt16BE(at);
    const length = raw.readUInt16BE(at + 2);
    if (at + 4 + length > end) break;
    // INFO-CODE (2 octets), then EXTRA-TEXT; shorter is malformed (RFC 8914 §2) and skipped.
    if (code === OPTION_EXTENDED_ERROR && length >= 2) {
      let text = decoder.decode(raw.subarray(at + 6, at + 4 + length));
      text = text.replace(/\0+$/, '');
      if (text.length > MAX_EXTRA_TEXT) text = `${text.slice(0, MAX_EXTRA_TEXT - 1)}…`;
      const info = raw.readUInt16BE(at + 4);
      out.push({ code: info, name: extendedErrorName(info), text });
    }
    at += 4 + length;
  }
  return out;
}

/**
 * The null address when every A or AAAA record in the answer section of a
 * NOERROR answer is 0.0.0.0 or :: (and there is at least one): how most
 * blocklist resolvers block without saying so. Null otherwise (a CNAME
 * chain ending in a real address, no addresses, another rcode).
 */
export function nullAddressAnswer(raw: Buffer): '0.0.0.0' | '::' | null {
  if (raw.length < HEADER_LENGTH || (raw.readUInt16BE(2) & 0xf) !== 0) return null;
  const count = raw.readUInt16BE(6);
  if (count === 0 || raw.readUInt16BE(4) !== 1) return null;
  const qEnd = nameEnd(raw, HEADER_LENGTH);
  if (qEnd === -1 || qEnd + 4 > raw.length) return null;
  const qtype = raw.readUInt16BE(qEnd);
  if (qtype !== TYPE_A && qtype !== TYPE_AAAA) return null;
  let offset = qEnd + 4;
  let found: '0.0.0.0' | '::' | null = null;
  for (let i = 0; i < count; i++) {
    const fixed = recordFixedAt(raw, offset);
    if (fixed === -1) return null;
    const next = recordEnd(raw, fixed);
    if (next === -1) return null;
    const type = raw.readUInt16BE(fixed);
    if (type === TYPE_A || type === TYPE_AAAA) {
      const data = fixed + RECORD_FIXED_LENGTH;
      for (let j = data; j < next; j++) if (raw[j] !== 0) return null;
      if (next - data !== (type === TYPE_A ? 4 : 16)) return null;
      found = type === TYPE_A ? '0.0.0.0' : '::';
    }
    offset = next;
  }
  return found;
}

/** What an answer says about itself: its EDEs (null when none) and whether it reads as blocked (null when not). */
export interface AnswerSigns {
  readonly extendedErrors: readonly ExtendedError[] | null;
  readonly blocked: BlockSign | null;
}

const NO_SIGNS: AnswerSigns = Object.freeze({ extendedErrors: null, blocked: null });

/**
 * The EDEs of an answer (only walked when the OPT has end-to-end options:
 * `hasOptions`, upstream-answer.ts's AnswerOpt.endToEndOptions) and its
 * block sign: the first EDE of 15-18, else a null-address answer.
 */
export function answerSigns(raw: Buffer, optStart: number, optEnd: number, hasOptions: boolean): AnswerSigns {
  const errors = hasOptions ? readExtendedErrors(raw, optStart, optEnd) : [];
  const said = errors.find((e) => isBlockingCode(e.code));
  if (said) return { extendedErrors: errors, blocked: { kind: 'ede', ...said } };
  const address = nullAddressAnswer(raw);
  if (errors.length === 0 && address === null) return NO_SIGNS;
  return { extendedErrors: errors.length > 0 ? errors : null, blocked: address === null ? null : { kind: 'zero-address', address } };
}

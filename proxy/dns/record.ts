/**
 * Resource records on the wire (RFC 1035 §4.1.3), walked in place: an owner
 * name (name.ts), then TYPE(2) CLASS(2) TTL(4) RDLENGTH(2), then RDLENGTH
 * octets of data. Every walk over a message's records in dns/ steps with
 * these two functions; nothing here allocates or throws: a record that runs
 * past the message is -1.
 */
import { nameEnd } from './name.js';

/** Octets of a record's fixed fields after its owner: TYPE CLASS TTL RDLENGTH. */
export const RECORD_FIXED_LENGTH = 10;

/**
 * Where the fixed fields of the record at `offset` start (just past its
 * owner name), or -1 when the owner is malformed or the fixed fields run
 * past the end. TYPE is at the result, CLASS at +2, TTL at +4, RDLENGTH at
 * +8, and the data at +RECORD_FIXED_LENGTH.
 */
export function recordFixedAt(raw: Buffer, offset: number): number {
  const fixed = nameEnd(raw, offset);
  return fixed === -1 || fixed + RECORD_FIXED_LENGTH > raw.length ? -1 : fixed;
}

/** The end of the record whose fixed fields are at `fixed` (recordFixedAt), or -1 when its data runs past the message. */
export function recordEnd(raw: Buffer, fixed: number): number {
  const end = fixed + RECORD_FIXED_LENGTH + raw.readUInt16BE(fixed + 8);
  return end > raw.length ? -1 : end;
}

// dns-packet exports per-section codecs that @types/dns-packet leaves out.
// `decode.bytes` is the library's documented way to learn how many octets the
// last decode consumed.
import type { Answer, Question } from 'dns-packet';

declare module 'dns-packet' {
  /** One resource record (any section), e.g. the OPT pseudo-record. */
  export const answer: {
    encode(record: Answer, buf?: Buffer, offset?: number): Buffer;
    decode: ((buf: Buffer, offset?: number) => Answer) & { bytes: number };
    encodingLength(record: Answer): number;
  };
  export const question: {
    decode: ((buf: Buffer, offset?: number) => Question) & { bytes: number };
    encodingLength(q: Question): number;
  };
  export const name: {
    decode: ((buf: Buffer, offset?: number) => string) & { bytes: number };
    encodingLength(name: string): number;
  };
}

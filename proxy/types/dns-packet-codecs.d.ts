// dns-packet exports per-section codecs that @types/dns-packet leaves out.
import type { Answer } from 'dns-packet';

declare module 'dns-packet' {
  /** One resource record (any section), e.g. the OPT pseudo-record. */
  export const answer: {
    encode(record: Answer, buf?: Buffer, offset?: number): Buffer;
    encodingLength(record: Answer): number;
  };
}

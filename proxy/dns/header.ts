/**
 * The fixed parts of a DNS message that more than one module of dns/ reads
 * or writes in place: the 12-octet header's flag bits (RFC 1035 §4.1.1),
 * response codes, the record types and EDNS option codes the proxy treats
 * specially, the message sizes it works with, and rcodeName for logs.
 * Nothing here reads a message.
 */

export const HEADER_LENGTH = 12;
/** RFC 1035 §4.2.1: without EDNS a UDP answer holds at most 512 octets. */
export const CLASSIC_UDP_SIZE = 512;
/** DNS flag day 2020: the EDNS buffer size we advertise. */
export const ADVERTISED_UDP_SIZE = 1232;

/** RFC 7871 EDNS Client Subnet: the client's is never forwarded; ours says "no subnet" (upstream-query.ts). */
export const OPTION_CLIENT_SUBNET = 8;
/** RFC 7828 edns-tcp-keepalive and RFC 7830 padding: the TLS hop's own options, never relayed to a client. */
export const OPTION_KEEPALIVE = 11;
export const OPTION_PADDING = 12;
/** RFC 8914 Extended DNS Error: why a resolver answered as it did (extended-error.ts); relayed to the client as sent. */
export const OPTION_EXTENDED_ERROR = 15;

export const TYPE_SOA = 6;
export const TYPE_OPT = 41;
export const TYPE_TKEY = 249;
export const TYPE_TSIG = 250;
export const TYPE_IXFR = 251;
export const TYPE_AXFR = 252;
export const TYPE_MAILB = 253;
export const TYPE_MAILA = 254;

export const FLAG_QR = 0x8000;
/** The four opcode bits (RFC 1035 §4.1.1); QUERY is 0. */
export const OPCODE_MASK = 0x7800;
export const FLAG_AA = 0x0400;
export const FLAG_TC = 0x0200;
export const FLAG_RD = 0x0100;
export const FLAG_RA = 0x0080;
export const FLAG_AD = 0x0020;
export const FLAG_CD = 0x0010;

export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  /** RFC 6891 §6.1.3: extended rcode 1, header rcode 0. */
  BADVERS: 16,
} as const;

export function rcodeName(rcode: number): string {
  switch (rcode) {
    case 0: return 'NOERROR';
    case 1: return 'FORMERR';
    case 2: return 'SERVFAIL';
    case 3: return 'NXDOMAIN';
    case 4: return 'NOTIMP';
    case 5: return 'REFUSED';
    case 16: return 'BADVERS';
    default: return `RCODE${rcode}`;
  }
}

/**
 * The network's own encrypted resolver, discovered and verified (issue 33,
 * item 5; Discovery of Designated Resolvers, RFC 9462; docs/networks.md#the-networks-own-encrypted-resolver):
 *
 *   1. one query, `_dns.resolver.arpa` SVCB, to the network's resolver
 *      (network-resolver.ts) on port 53: a constant, the same for every user
 *      and network, carrying nothing of the user's;
 *   2. each service-form record that designates DNS-over-TLS (alpn "dot")
 *      is read (dns/svcb.ts), lowest priority first; a DoH designation
 *      (h2 or h3 with a dohpath, RFC 9461) of the same name becomes its
 *      fallback URL;
 *   3. Verified Discovery (RFC 9462 §4.2): a TLS handshake with the
 *      designated resolver, at its address hints (none: the network
 *      resolver's own address, where routers serve it), whose certificate
 *      must chain to a trusted CA (the system's, plus `--ca`) and carry the
 *      unencrypted resolver's IP address in its subjectAltName, and also
 *      its own name (what every later connection authenticates against).
 *
 * A designation whose certificate doesn't cover the address we asked is
 * refused: anyone who can answer one cleartext query (a spoofed answer, a
 * box on the path) could name their own resolver, with a certificate valid
 * for their own name; only the operator of that address can get one for it.
 * Nothing here switches anything: the result is an offer, written to the
 * network's memory, that the user may take (ddr-check.ts, the Network view,
 * the tray).
 *
 * This module only measures; when it may run is privacy/ddr-check.ts's
 * decision.
 */
import tls from 'node:tls';
import { askOverUdp, decodedAnswer } from '../dns/ask-udp.js';
import { parseSvcb, SvcbFormatError, TYPE_SVCB, type SvcbRecord } from '../dns/svcb.js';
import type { NetworkServer } from './network-resolver.js';

/** The one name asked (RFC 9462 §4): special-use, answered by the resolver itself. */
export const DDR_NAME = '_dns.resolver.arpa';

export interface DdrOptions {
  /** CA certificates trusted beside the system's (`--ca`). */
  readonly ca: readonly (string | Buffer)[];
  /** How long to wait for the SVCB answer, and for each handshake, ms. */
  readonly timeoutMs: number;
}

export const DEFAULT_DDR_TIMEOUT_MS = 1500;

/** A designated resolver that verified: what the offer says and what a connection to it needs (remembered as it is: network-memory.ts's DdrOffer). */
export interface Designation {
  /** Its name, checked in its certificate as well: what every connection to it authenticates. */
  readonly name: string;
  readonly protocol: 'dot';
  readonly port: number;
  /** Where to reach it (its hints, or the network resolver's address). */
  readonly addresses: readonly string[];
  /** Its DoH URL when the same name is designated for DoH too (dohpath's template without its `{?dns}`): the fallback when 853 is blocked. */
  readonly dohUrl?: string;
  /** The network resolver's address its certificate was verified for. */
  readonly verifiedFor: string;
}

export interface DdrResult {
  /** The network resolver asked. */
  readonly asked: string;
  /** The first DNS-over-TLS designation that verified, lowest priority first; null: none. */
  readonly offer: Designation | null;
  /** Designations refused, with why (a forged one: its certificate doesn't cover the address asked). */
  readonly rejected: readonly { readonly name: string; readonly why: string }[];
  /** When nothing was designated: why ("no SVCB answer", "NXDOMAIN"), for the log and the card. */
  readonly detail: string;
}

/** Asks `server` for its designated resolvers and verifies each; never throws. */
export async function discoverDesignatedResolver(server: NetworkServer, o: DdrOptions): Promise<DdrResult> {
  const asked = server.host.replace(/%.*$/, '');
  const answer = await askSvcb(server, o.timeoutMs);
  if (typeof answer === 'string') return { asked, offer: null, rejected: [], detail: answer };
  const rejected: { name: string; why: string }[] = [];
  const candidates = answer
    .filter((r) => r.priority > 0)
    .sort((a, b) => a.priority - b.priority)
    .flatMap((r, _i, all) => candidatesOf(r, all, asked, server.host));
  for (const c of candidates) {
    const why = await verify(c, asked, o);
    if (why === null) return { asked, offer: c, rejected, detail: `${c.name} verified for ${asked}` };
    rejected.push({ name: c.name, why });
  }
  return { asked, offer: null, rejected, detail: candidates.length ? 'no designation verified' : 'no DNS-over-TLS designation in the answer' };
}

/**
 * What one record designates that dotstub can use: DNS-over-TLS. A DoH
 * designation of the same name (in any record) becomes its fallback URL,
 * reached at the same addresses and authenticated by that name when used
 * (docs/networks.md#the-fallback-ladder); a DoH-only designation is not
 * offered (dotstub's resolvers are DoT first).
 */
function candidatesOf(r: SvcbRecord, all: readonly SvcbRecord[], asked: string, own: string): Designation[] {
  // A target of "." means the owner name (resolver.arpa): nothing a certificate can name.
  if (r.target === '' || r.target.endsWith('resolver.arpa') || !r.alpn.includes('dot')) return [];
  const hints = [...r.ipv4hint, ...r.ipv6hint];
  const doh = all.find((x) => x.target === r.target && x.dohpath && (x.alpn.includes('h2') || x.alpn.includes('h3')));
  const dohPort = doh?.port ?? 443;
  const dohUrl = doh?.dohpath ? `https://${r.target}${dohPort === 443 ? '' : `:${dohPort}`}${doh.dohpath.replace(/\{\?dns\}$/, '')}` : undefined;
  return [{ name: r.target, protocol: 'dot', port: r.port ?? 853, addresses: hints.length > 0 ? hints : [own], ...(dohUrl ? { dohUrl } : {}), verifiedFor: asked }];
}

/**
 * One handshake per address until one verifies: null when the certificate
 * chains to a trusted CA and covers both `asked` (the unencrypted
 * resolver's IP) and the designation's name; otherwise why not.
 */
async function verify(d: Designation, asked: string, o: DdrOptions): Promise<string | null> {
  let why = 'no address to reach it at';
  for (const address of d.addresses) {
    why = await handshake(d, address, asked, o);
    if (why === '') return null;
  }
  return why;
}

function handshake(d: Designation, address: string, asked: string, o: DdrOptions): Promise<string> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const socket = tls.connect({
      host: address,
      port: d.port,
      servername: d.name,
      ALPNProtocols: ['dot'],
      ...(o.ca.length ? { ca: [...tls.rootCertificates, ...o.ca] } : {}),
      minVersion: 'TLSv1.2',
      // The address we asked first (RFC 9462 §4.2): the designation is the unencrypted resolver's only if its certificate names that address.
      checkServerIdentity: (_host, cert) => {
        if (tls.checkServerIdentity(asked, cert)) return new Error(`the certificate of ${d.name} (${address}) is not valid for ${asked}, the network's resolver (it names ${cert.subjectaltname ?? 'nothing'}): not a designation that resolver can vouch for`);
        return tls.checkServerIdentity(d.name, cert) ? new Error(`the certificate at ${address} is valid for ${asked} but not for ${d.name}, the name designated`) : undefined;
      },
    });
    const timer = setTimeout(() => done(`no TLS handshake with ${d.name} at ${address}:${d.port} within ${o.timeoutMs} ms`), o.timeoutMs);
    socket.once('secureConnect', () => done(''));
    socket.once('error', (err) => done(err.message.includes('not valid for') || err.message.includes('not a designation') ? err.message : `${d.name} at ${address}:${d.port}: ${err.message}`));
  });
}

/** The SVCB records of the answer, or why there are none. */
async function askSvcb(server: NetworkServer, timeoutMs: number): Promise<SvcbRecord[] | string> {
  const host = server.host;
  const r = await askOverUdp({ host, port: server.port, name: DDR_NAME, type: `UNKNOWN_${TYPE_SVCB}`, timeoutMs, read: decodedAnswer(DDR_NAME) });
  if (!r.answered) return r.why === 'not-an-address' ? `${host} is not an address` : r.why === 'failed' ? r.detail : `no answer from ${host} within ${timeoutMs} ms`;
  const { message, decoded } = r.answer;
  if (decoded.flags !== undefined && decoded.flags & 0x200) return 'the answer was truncated';
  const rcode = (message[3] ?? 0) & 0xf;
  if (rcode !== 0) return rcode === 3 ? 'NXDOMAIN: no designated resolver' : `the resolver answered with RCODE ${rcode}`;
  const records: SvcbRecord[] = [];
  for (const a of decoded.answers ?? []) {
    if (a.name.toLowerCase() !== DDR_NAME || (a.type as string) !== `UNKNOWN_${TYPE_SVCB}`) continue;
    try {
      records.push(parseSvcb((a as unknown as { data: Buffer }).data));
    } catch (err) {
      // One malformed record is skipped; the others still count.
      if (!(err instanceof SvcbFormatError)) throw err;
    }
  }
  return records.length ? records : 'no SVCB record in the answer';
}

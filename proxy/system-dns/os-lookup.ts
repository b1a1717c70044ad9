/**
 * A lookup through the OS resolver (getaddrinfo, as every program does), to
 * show the user that DNS works after a change, in words.
 */
import dns from 'node:dns';
import fs from 'node:fs';
import { formatHostPort } from '../runtime/host-port.js';
import { parseResolvConf } from './resolv-conf.js';

export interface LookupReport {
  readonly name: string;
  readonly ok: boolean;
  readonly addresses: readonly string[];
  /** getaddrinfo's code (ENOTFOUND, EAI_AGAIN…) or TIMEOUT. */
  readonly error?: string;
  readonly ms: number;
  /** One line for the user. */
  readonly text: string;
}

export async function osLookup(name: string, timeoutMs = 12_000): Promise<LookupReport> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })), timeoutMs);
  });
  try {
    const all = await Promise.race([dns.promises.lookup(name, { all: true }), timeout]);
    const addresses = all.map((a) => a.address);
    const ms = Date.now() - start;
    return { name, ok: true, addresses, ms, text: `${name} resolves through the system (${addresses.join(', ')}, ${ms} ms)` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'ERROR';
    const ms = Date.now() - start;
    return { name, ok: false, addresses: [], error: code, ms, text: `${name} does not resolve through the system (${code} after ${ms} ms)` };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A lookup "through the system" when the system is a copy under a test root
 * (--root): glibc would read the copy's resolv.conf, so this asks the
 * nameservers listed there, in order, as glibc does. A resolv.conf line has
 * no port, so loopback servers are asked at `loopbackPort` (where the test's
 * dotstub listens); any other address is never asked (a test root must not
 * send traffic off this machine) and is reported as not reachable.
 */
export function resolvConfLookup(resolvConfFile: string, loopbackPort: number, timeoutMs = 2000): (name: string) => Promise<LookupReport> {
  return async (name) => {
    const start = Date.now();
    let text = '';
    try {
      text = fs.readFileSync(resolvConfFile, 'utf8');
    } catch {
      /* no file: no nameserver */
    }
    const servers = parseResolvConf(text).nameservers;
    let error = 'ENOTFOUND';
    for (const server of servers) {
      if (!/^127\.|^::1$/.test(server)) {
        error = `NOT_ASKED (${server} is off this machine)`;
        continue;
      }
      const r = new dns.promises.Resolver({ timeout: timeoutMs, tries: 1 });
      r.setServers([formatHostPort(server, loopbackPort)]);
      try {
        const addresses = await r.resolve4(name);
        const ms = Date.now() - start;
        return { name, ok: true, addresses, ms, text: `${name} resolves through the system (${addresses.join(', ')}, ${ms} ms)` };
      } catch (err) {
        error = (err as NodeJS.ErrnoException).code ?? 'ERROR';
        // An answer (even "no such name") ends the search, as in glibc.
        if (error === 'ENOTFOUND' || error === 'ENODATA') break;
      }
    }
    const ms = Date.now() - start;
    return { name, ok: false, addresses: [], error, ms, text: `${name} does not resolve through the system (${error} after ${ms} ms)` };
  };
}

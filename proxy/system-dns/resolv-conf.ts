/**
 * /etc/resolv.conf as glibc reads it: nameserver, search/domain and options
 * lines. glibc has no port here, so pointing it at dotstub means
 * `nameserver 127.0.0.1` with dotstub on port 53.
 */

export const STUB_ADDRESSES = new Set(['127.0.0.1', '::1']);
/** systemd-resolved's own stub listeners. */
export const RESOLVED_STUBS = new Set(['127.0.0.53', '127.0.0.54']);

export interface ResolvConf {
  readonly nameservers: readonly string[];
  /** search/domain/options/sortlist lines, kept as written. */
  readonly otherLines: readonly string[];
}

export function parseResolvConf(text: string): ResolvConf {
  const nameservers: string[] = [];
  const otherLines: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0] !== undefined) nameservers.push(rest[0]);
    else otherLines.push(line);
  }
  return { nameservers, otherLines };
}

export const MANAGED_MARKER = '# Managed by dotstub (private DNS).';

/** The search list a resolv.conf gives glibc: its last `search` or `domain` line wins (resolv.conf(5)). */
export function searchDomains(conf: ResolvConf): string[] {
  let out: string[] = [];
  for (const line of conf.otherLines) {
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'search' || key === 'domain') out = rest.filter((d) => d !== '' && d !== '.');
  }
  return out;
}

/**
 * The resolv.conf that sends every lookup to dotstub: only our nameserver
 * (every other one is dropped, IPv6 included: glibc would try them when the
 * stub is slow, and RDNSS servers leak around it), options kept, and one
 * search line so short names resolve as before: the search domains of the
 * links that registered with resolvconf (a VPN's hook, wg-quick: `extra`,
 * first, as resolvconf orders VPNs before the LAN), then the file's own.
 *
 * And `options trust-ad` (glibc 2.31+ hands programs the AD bit, "DNSSEC
 * validated", only with it): dotstub relays AD only as a resolver it
 * authenticated set it, and clears it from every other answer
 * (dns/upstream-answer.ts withoutAuthenticData), so on this machine AD means
 * what it says, which it can't where glibc would take it from a network's
 * resolver. ssh's VerifyHostKeyDNS, for one, trusts SSHFP records only then.
 */
export function renderStubResolvConf(original: ResolvConf, extra: readonly string[] = []): string {
  const search = [...new Set([...extra, ...searchDomains(original)].map((d) => d.replace(/\.$/, '')))];
  const others = original.otherLines.filter((l) => !/^(search|domain)(\s|$)/.test(l));
  const trustAd = others.some((l) => /^options\s(.*\s)?trust-ad(\s|$)/.test(l));
  return [
    MANAGED_MARKER,
    '# Your original file is in the journal; `dotstub system-dns restore` puts it back.',
    'nameserver 127.0.0.1',
    ...(search.length ? [`search ${search.join(' ')}`] : []),
    ...others,
    ...(trustAd ? [] : ['options trust-ad']),
    '',
  ].join('\n');
}

/** Nameservers in the file other than dotstub's own: every one is a way around dotstub. */
export function foreignNameservers(conf: ResolvConf): string[] {
  return conf.nameservers.filter((n) => !STUB_ADDRESSES.has(n));
}

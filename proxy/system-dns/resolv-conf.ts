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

/**
 * The resolv.conf that sends every lookup to dotstub: only our nameserver
 * (every other one is dropped, IPv6 included: glibc would try them when the
 * stub is slow, and RDNSS servers leak around it), search domains and
 * options kept so short names resolve as before.
 */
export function renderStubResolvConf(original: ResolvConf): string {
  return [
    MANAGED_MARKER,
    '# Your original file is in the journal; `dotstub system-dns restore` puts it back.',
    'nameserver 127.0.0.1',
    ...original.otherLines,
    '',
  ].join('\n');
}

/** Nameservers in the file other than dotstub's own: every one is a way around dotstub. */
export function foreignNameservers(conf: ResolvConf): string[] {
  return conf.nameservers.filter((n) => !STUB_ADDRESSES.has(n));
}

/**
 * Resolvers: presets and user-defined DoT servers, and their validation.
 *
 * A resolver is one or more addresses sharing a port, an authentication
 * domain name (RFC 8310 §8) and optionally a set of SPKI pins (RFC 7858 §4.2,
 * base64 of SHA-256 over the DER SubjectPublicKeyInfo).
 *
 * A resolver may also have a DNS-over-HTTPS endpoint (RFC 8484), used when
 * port 853 is blocked (docs/networks.md#the-fallback-ladder). It is reached at the
 * same IP addresses (no DNS to find DNS) and authenticated on its own by the
 * URL host's certificate. Never derived by guessing: only a preset's or the
 * user's own URL.
 */
import net from 'node:net';
import { formatHost, formatHostPort } from '../runtime/host-port.js';
import { PinFormatError, ResolverSpecError } from '../errors.js';

export const DOT_PORT = 853;

export interface ResolverSpec {
  /** Stable identifier: a preset's key or `custom:<addr>`; used in metrics and the API. */
  readonly id: string;
  /** Human-readable name for the UI and logs. */
  readonly label: string;
  /** IP literals, tried in order; never hostnames (that would need DNS to find DNS). */
  readonly addresses: readonly string[];
  readonly port: number;
  /** Authentication domain name checked against the certificate; required in strict mode unless pinned. */
  readonly authName: string | undefined;
  /** base64 SHA-256 SPKI pins; a match authenticates on its own. */
  readonly pins: readonly string[];
  /** The DoH endpoint, validated by validateDohUrl (https, a host name, a path); absent: DoT only. */
  readonly dohUrl?: string | undefined;
}

/** Who runs a preset, and the page where they document the service (what dotstub's entry was taken from). */
export interface Operator {
  readonly name: string;
  /** https, on a host the desktop app may open (app/security/urls.ts). */
  readonly docs: string;
}

/** A preset: a resolver dotstub lists by name, with who runs it and what it blocks. */
export interface PresetSpec extends ResolverSpec {
  readonly operator: Operator;
  /**
   * What the service blocks, and how a blocked name looks, in words (from
   * the operator's page in `operator.docs`): shown where the resolver is
   * described, so a refused name is no surprise.
   */
  readonly blocking: string;
}

export const PRESETS: Readonly<Record<string, PresetSpec>> = Object.freeze({
  cloudflare: {
    id: 'cloudflare',
    label: 'Cloudflare',
    operator: { name: 'Cloudflare', docs: 'https://developers.cloudflare.com/1.1.1.1/encryption/dns-over-tls/' },
    blocking:
      'Blocks nothing: 1.1.1.1 answers every name. Cloudflare’s blocking families are other servers, not presets here: 1.1.1.2 (security.cloudflare-dns.com) blocks malware, 1.1.1.3 (family.cloudflare-dns.com) malware and adult content; add one as your own resolver to use it.',
    addresses: ['1.1.1.1', '1.0.0.1', '2606:4700:4700::1111', '2606:4700:4700::1001'],
    port: DOT_PORT,
    authName: 'cloudflare-dns.com',
    pins: [],
    dohUrl: 'https://cloudflare-dns.com/dns-query',
  },
  quad9: {
    id: 'quad9',
    label: 'Quad9',
    operator: { name: 'Quad9 Foundation', docs: 'https://www.quad9.net/service/service-addresses-and-features/' },
    blocking:
      'Blocks names its threat-intelligence partners list as malware, phishing, botnet or other malicious hosts: such a name answers NXDOMAIN, as if it did not exist, with an Extended DNS Error saying so where Quad9 sends one.',
    addresses: ['9.9.9.9', '149.112.112.112', '2620:fe::fe', '2620:fe::9'],
    port: DOT_PORT,
    authName: 'dns.quad9.net',
    pins: [],
    dohUrl: 'https://dns.quad9.net/dns-query',
  },
  google: {
    id: 'google',
    label: 'Google Public DNS',
    operator: { name: 'Google', docs: 'https://developers.google.com/speed/public-dns/docs/dns-over-tls' },
    blocking: 'Keeps no blocklist: answers every name, except where a court or law obliges Google to refuse one.',
    addresses: ['8.8.8.8', '8.8.4.4', '2001:4860:4860::8888', '2001:4860:4860::8844'],
    port: DOT_PORT,
    authName: 'dns.google',
    pins: [],
    dohUrl: 'https://dns.google/dns-query',
  },
  adguard: {
    id: 'adguard',
    label: 'AdGuard DNS',
    operator: { name: 'AdGuard', docs: 'https://adguard-dns.io/kb/general/dns-providers/' },
    blocking:
      'Blocks ads, trackers and known malware and phishing sites (AdGuard DNS’s default servers): a blocked name answers 0.0.0.0 or ::, an address that goes nowhere.',
    addresses: ['94.140.14.14', '94.140.15.15', '2a10:50c0::ad1:ff', '2a10:50c0::ad2:ff'],
    port: DOT_PORT,
    authName: 'dns.adguard-dns.com',
    pins: [],
    dohUrl: 'https://dns.adguard-dns.com/dns-query',
  },
});

/**
 * A preset whose operator closed the service. Kept so a saved choice, a
 * command line or an old script naming it is told what happened and moved
 * to (or pointed at) the replacement, instead of failing without a word.
 * Retiring a preset: move its entry from PRESETS to here, and test it.
 */
export interface RetiredPreset {
  readonly id: string;
  readonly label: string;
  readonly operator: string;
  /** The day the service closed, YYYY-MM-DD (UTC). */
  readonly closed: string;
  /** The operator's own words about the closure. */
  readonly words: string;
  /** The preset a saved choice moves to: the operator's recommendation where it made one. */
  readonly replacement: string;
}

export const RETIRED_PRESETS: readonly RetiredPreset[] = Object.freeze([
  {
    id: 'mullvad',
    label: 'Mullvad DNS',
    operator: 'Mullvad',
    closed: '2026-11-02',
    words: 'Shutting down our public encrypted DNS servers and sponsoring Quad9 instead',
    replacement: 'quad9',
  },
]);

export function retiredPreset(id: string): RetiredPreset | undefined {
  return RETIRED_PRESETS.find((r) => r.id === id.toLowerCase());
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Mullvad DNS closed on 2 Nov 2026": one wording for the CLI, the timeline and the dashboard. */
export function closedSentence(r: RetiredPreset): string {
  const [y, m, d] = r.closed.split('-').map(Number) as [number, number, number];
  return `${r.label} closed on ${d} ${MONTHS[m - 1]} ${y}`;
}

// RFC 1123 host name: labels of letters, digits and hyphens, not at the ends.
const HOSTNAME = /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/i;

export function validateAuthName(name: string): string {
  if (!HOSTNAME.test(name)) {
    throw new ResolverSpecError(
      `"${name}" is not a valid authentication name: use the host name on the resolver's certificate, e.g. dns.quad9.net`,
    );
  }
  return name.replace(/\.$/, '').toLowerCase();
}

export function validatePin(pin: string): string {
  const trimmed = pin.trim().replace(/^sha256\//i, '');
  const bytes = Buffer.from(trimmed, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || bytes.length !== 32 || bytes.toString('base64') !== trimmed) {
    throw new PinFormatError(
      `"${pin}" is not an SPKI pin: expected base64 of a SHA-256 digest (44 characters ending in "="), ` +
        'e.g. from `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`',
    );
  }
  return trimmed;
}

/**
 * Validates a DoH endpoint (RFC 8484 §3: an https URI template; dotstub
 * uses POST, so no `{?dns}` variable). The host is what the certificate is
 * checked against; the resolver's IP addresses are where it is reached.
 * Returns the URL in normal form.
 */
export function validateDohUrl(text: string): string {
  const hint = 'e.g. https://dns.quad9.net/dns-query';
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ResolverSpecError(`"${text}" is not a URL: give the resolver's DNS-over-HTTPS address, ${hint}`);
  }
  if (url.protocol !== 'https:') throw new ResolverSpecError(`"${text}": a DNS-over-HTTPS URL must start with https:// (${hint})`);
  if (url.username || url.password) throw new ResolverSpecError(`"${text}": remove the user name and password from the URL`);
  if (url.hash) throw new ResolverSpecError(`"${text}": remove the "#…" part from the URL`);
  if (/%7B|%7D|[{}]/i.test(url.pathname + url.search)) {
    throw new ResolverSpecError(`"${text}": give the URL without its {?dns} template part (${hint}); dotstub sends queries by POST`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) === 0 && !HOSTNAME.test(host)) throw new ResolverSpecError(`"${text}": "${host}" is not a valid host name (${hint})`);
  if (url.pathname === '/' && url.search === '') {
    throw new ResolverSpecError(`"${text}": add the path of the DNS-over-HTTPS endpoint, usually /dns-query (${hint})`);
  }
  return url.href;
}

/**
 * Where a resolver's DoH endpoint is authenticated: the URL host (a name,
 * or an IP literal, which only verifies if the certificate lists that
 * address), its port and the request path.
 */
export function dohEndpoint(dohUrl: string): { readonly host: string; readonly port: number; readonly path: string; readonly authority: string } {
  const url = new URL(dohUrl);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 443 : Number(url.port),
    path: url.pathname + url.search,
    authority: url.host,
  };
}

function validatePort(text: string, arg: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new ResolverSpecError(`"${arg}": port must be a number from 1 to 65535`);
  }
  return Number(text);
}

export interface CustomResolverInput {
  readonly address: string | readonly string[];
  readonly port?: number | undefined;
  readonly authName?: string | undefined;
  readonly pins?: readonly string[] | undefined;
  readonly label?: string | undefined;
  readonly id?: string | undefined;
  readonly dohUrl?: string | undefined;
}

/** Builds a validated user-defined resolver. Throws ResolverSpecError / PinFormatError. */
export function customResolver(input: CustomResolverInput): ResolverSpec {
  const addresses = (typeof input.address === 'string' ? [input.address] : [...input.address]).map((a) => a.trim());
  if (addresses.length === 0) throw new ResolverSpecError('a resolver needs at least one IP address');
  for (const a of addresses) {
    if (net.isIP(a) === 0) {
      throw new ResolverSpecError(
        `"${a}" is not an IP address: give the resolver's IPv4 or IPv6 address (a host name would need DNS to find DNS)`,
      );
    }
  }
  const port = input.port ?? DOT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ResolverSpecError(`port ${port} is out of range: use 1-65535 (DoT is 853)`);
  }
  const authName = input.authName === undefined || input.authName === '' ? undefined : validateAuthName(input.authName);
  const pins = (input.pins ?? []).map(validatePin);
  const dohUrl = input.dohUrl === undefined || input.dohUrl === '' ? undefined : validateDohUrl(input.dohUrl);
  const first = addresses[0] as string;
  const hostPart = formatHost(first);
  // Every address in the label: a race may connect to any of them, and the
  // banner must not name one it isn't using.
  const hosts = addresses.map(formatHost).join(', ');
  return {
    id: input.id ?? `custom:${hostPart}:${port}`,
    label: input.label ?? (authName ? `${authName} (${hosts})` : hosts),
    addresses,
    port,
    authName,
    pins,
    ...(dohUrl !== undefined ? { dohUrl } : {}),
  };
}

/**
 * Parses the CLI form: a preset name, or `addr[:port][#authname]` with IPv6 in
 * brackets (`[2620:fe::fe]:853#dns.quad9.net`), the syntax stubby and
 * Android's private DNS made familiar; several addresses of one resolver
 * comma-separated (`9.9.9.9,[2620:fe::fe]:853#dns.quad9.net`).
 */
export function parseResolverArg(arg: string, pins: readonly string[] = [], dohUrl?: string): ResolverSpec {
  const retired = retiredPreset(arg);
  // An explicit choice is not swapped for another operator behind the user's back: say what happened and what to use.
  if (retired) {
    throw new ResolverSpecError(`"${retired.id}" was retired: ${closedSentence(retired)} (${retired.operator}: "${retired.words}"); use --resolver ${retired.replacement} instead`);
  }
  const preset = PRESETS[arg.toLowerCase()];
  if (preset) {
    if (pins.length === 0 && dohUrl === undefined) return preset;
    return {
      ...preset,
      ...(pins.length ? { pins: pins.map(validatePin) } : {}),
      ...(dohUrl !== undefined ? { dohUrl: validateDohUrl(dohUrl) } : {}),
    };
  }
  const [hostPorts = '', authName, extra] = arg.split('#');
  if (extra !== undefined) throw new ResolverSpecError(`"${arg}": only one "#authname" is allowed`);
  // Several addresses of one resolver, comma-separated (`10.0.0.1,[2001:db8::1]:853#name`):
  // dotstub races them, IPv6 first (Happy Eyeballs). They share one port.
  const addresses: string[] = [];
  let port: number | undefined;
  for (const hostPort of hostPorts.split(',')) {
    const one = parseHostPort(hostPort, arg);
    if (one.port !== undefined && port !== undefined && one.port !== port) throw new ResolverSpecError(`"${arg}": the addresses of one resolver share one port`);
    port = one.port ?? port;
    addresses.push(one.address);
  }
  return customResolver({ address: addresses, port, authName, pins, dohUrl });
}

function parseHostPort(hostPort: string, arg: string): { address: string; port: number | undefined } {
  let address: string;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(hostPort);
  if (bracket) {
    address = bracket[1] as string;
    if (bracket[2] !== undefined) port = validatePort(bracket[2], arg);
  } else if (net.isIP(hostPort) === 6) {
    address = hostPort;
  } else {
    const idx = hostPort.lastIndexOf(':');
    if (idx >= 0) {
      address = hostPort.slice(0, idx);
      port = validatePort(hostPort.slice(idx + 1), arg);
    } else {
      address = hostPort;
    }
  }
  if (net.isIP(address) === 0) {
    throw new ResolverSpecError(
      `unknown resolver "${arg}": use a preset (${Object.keys(PRESETS).join(', ')}) or address[:port][#authname], e.g. 9.9.9.9:853#dns.quad9.net`,
    );
  }
  return { address, port };
}

/** Readable form, e.g. `quad9` or `127.0.0.1:8853#dns.test`. */
export function describeResolver(spec: ResolverSpec): string {
  if (PRESETS[spec.id] === spec) return spec.id;
  const first = spec.addresses[0] ?? '?';
  return `${formatHostPort(first, spec.port)}${spec.authName ? `#${spec.authName}` : ''}`;
}

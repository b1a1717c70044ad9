/**
 * `host:port` as people and URLs write it: IPv6 literals in brackets
 * (RFC 3986 §3.2.2), so `[::1]:53` and `127.0.0.1:53`.
 */
export function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export function formatHostPort(host: string, port: number): string {
  return `${formatHost(host)}:${port}`;
}

/**
 * Where the machine's DNS comes in: the listen addresses, parsed from flags,
 * and the errors a bind can meet, worded so the user knows what to do.
 */
import net from 'node:net';
import type { Transport } from '../engine/query-record.js';
import { ConfigError, ListenError } from '../errors.js';
import { formatHostPort } from '../runtime/host-port.js';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Handles one message from a client. Returns true when `reply` has been or
 * will be called, exactly once; false when the message gets no reply at all
 * (it is dropped), and then `reply` is never called. Listeners count only
 * what returns true as outstanding.
 */
export type QueryHandler = (raw: Buffer, transport: Transport, reply: (answer: Buffer) => void) => boolean;

export const DEFAULT_LISTEN: readonly ListenAddress[] = [
  { host: '127.0.0.1', port: 53 },
  { host: '::1', port: 53 },
];

/** Parses `127.0.0.1:5300`, `[::1]:5300`, `::1` or `:5300` (both loopbacks). */
export function parseListenArg(arg: string): ListenAddress[] {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(arg);
  let host: string;
  let portText: string | undefined;
  if (m) {
    host = m[1] as string;
    portText = m[2];
  } else if (net.isIPv6(arg)) {
    host = arg;
  } else {
    const idx = arg.lastIndexOf(':');
    host = idx >= 0 ? arg.slice(0, idx) : arg;
    portText = idx >= 0 ? arg.slice(idx + 1) : undefined;
  }
  const port = portText === undefined ? 53 : Number(portText);
  if (portText !== undefined && (!/^\d{1,5}$/.test(portText) || port > 65535)) {
    throw new ConfigError(`--listen ${arg}: port must be a number from 0 to 65535`);
  }
  if (host === '') return DEFAULT_LISTEN.map((a) => ({ host: a.host, port }));
  if (net.isIP(host) === 0) throw new ConfigError(`--listen ${arg}: "${host}" is not an IP address (e.g. 127.0.0.1:5300 or [::1]:5300)`);
  return [{ host, port }];
}

export function listenError(err: NodeJS.ErrnoException, addr: ListenAddress, transport: Transport): ListenError {
  const where = `${formatHostPort(addr.host, addr.port)}/${transport}`;
  if (err.code === 'EACCES' && addr.port < 1024) {
    return new ListenError(
      `cannot listen on ${where}: ports below 1024 need root or CAP_NET_BIND_SERVICE. ` +
        'Run unprivileged on a high port with `dotstub --listen 127.0.0.1:5300`, ' +
        'or grant the capability: `sudo setcap cap_net_bind_service=+ep "$(command -v node)"`.',
      addr.host,
      addr.port,
      { cause: err },
    );
  }
  if (err.code === 'EADDRINUSE') {
    return new ListenError(
      `cannot listen on ${where}: another program is using it (often systemd-resolved, dnsmasq or another stub). ` +
        'Stop it, or choose another port with --listen 127.0.0.1:5300.',
      addr.host,
      addr.port,
      { cause: err },
    );
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new ListenError(`cannot listen on ${where}: this machine has no such address`, addr.host, addr.port, { cause: err });
  }
  return new ListenError(`cannot listen on ${where}: ${err.code ?? err.message}`, addr.host, addr.port, { cause: err });
}

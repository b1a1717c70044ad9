/**
 * What the `dotstub` command prints: one stderr line per thing a user should
 * know (state changes, connections, warnings, captive portals), and with
 * --log one stdout line per query.
 */
import type { ConfigProblem } from '../files/config-file.js';
import { describeResolver } from '../config/resolvers.js';
import type { StubProxy } from '../dotstub.js';
import { formatRecord } from '../engine/query-record.js';
import { formatHostPort } from '../runtime/host-port.js';
import type { ListenAddress } from '../listen/address.js';
import { quickAckSupport } from '../upstream/quick-ack.js';
import { classicalWords } from '../control/api-client/key-agreement.js';

export function say(line: string): void {
  console.error(`dotstub: ${line}`);
}

export function reportProblem(p: ConfigProblem): void {
  say(`${p.file}: ${p.message}`);
  say(`  using ${p.using}`);
}

/** Subscribes the log to `proxy`'s events (before it starts, so nothing is missed). */
export function logProxy(proxy: StubProxy, queries: boolean): void {
  // A flapping link's episode is its first and last lines (privacy/flap-episode.ts), not a line per change.
  const quiet = (): boolean => proxy.privacy.flapping;
  proxy.on('state', (s) => {
    if (!quiet() || s.episode !== undefined || s.takeover !== undefined) say(`${s.state}: ${s.reason}`);
  });
  proxy.on('network-change', (c) => {
    if (!quiet()) say(`network changed (${c.sentence}): reconnecting now`);
  });
  proxy.on('warning', (w) => say(`warning: ${w}`));
  proxy.on('transport', (t) => say(`${t.reason}${t.detail ? ` (${t.detail})` : ''}`));
  proxy.on('captive', (e) => say(`Wi-Fi sign-in: ${e.sentence}`));
  proxy.on('connection', (e) => {
    if (e.type === 'open') {
      const group = e.keyGroup === null ? '' : `, ${e.keyGroup}`;
      const classical = classicalWords(e.classicalOnly);
      const why = classical === null ? '' : `: ${classical}`;
      say(`connection ${e.connectionId} to ${e.address} open (${e.resumed ? 'resumed' : 'full'} handshake, ${e.tlsVersion}${group}, ${e.handshakeMs.toFixed(1)} ms)${why}`);
    } else if (e.type === 'close') {
      say(`connection ${e.connectionId} closed (${e.reason}, carried ${e.queriesCarried} ${e.queriesCarried === 1 ? 'query' : 'queries'})`);
    } else if (e.type === 'connect-failed') {
      say(`cannot reach ${e.address}: ${e.message}`);
    }
  });
  if (queries) proxy.on('query', (r) => console.log(formatRecord(r)));
}

/** Where DNS is taken and where it goes; a warning when quick ACKs are missing where they should work. */
export function logListening(proxy: StubProxy, bound: readonly ListenAddress[]): void {
  const r = proxy.resolver;
  say(
    `listening on ${bound.map((a) => formatHostPort(a.host, a.port)).join(', ')} (UDP and TCP), forwarding to ${describeResolver(proxy.resolver)} over TLS${r.dohUrl ? ` (DNS-over-HTTPS at ${r.dohUrl} if port ${r.port} is blocked)` : ''}`,
  );
  // Said once, where it is expected to work: without it a resolver that uses
  // Nagle's algorithm can hold answers for our delayed ACKs (quick-ack.ts).
  const quickAck = quickAckSupport();
  if (!quickAck.available && process.platform === 'linux') {
    say(`warning: quick ACKs unavailable (${quickAck.reason}): a resolver that uses Nagle's algorithm may hold answers up to 40 ms${quickAck.fix ? `. ${quickAck.fix}` : ''}`);
  }
}

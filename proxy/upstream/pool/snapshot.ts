/**
 * The status API's view of a pool's live connections (a fallback joins
 * its two sides' views).
 */
import type { PoolConnection } from '../connection/contract.js';
import type { ConnectionSnapshot, UpstreamSnapshot } from '../managed.js';

/** `extras`: the connections opened for a burst (they close when idle and aren't re-opened). */
export function snapshotOf(live: readonly PoolConnection[], extras: WeakSet<PoolConnection>, resolverId: string): UpstreamSnapshot {
  const now = Date.now();
  const connections: ConnectionSnapshot[] = [];
  let open = false;
  let verified = false;
  for (const c of live) {
    if (c.state === 'open') {
      open = true;
      if (c.handshake?.verified === true) verified = true;
    }
    connections.push({
      id: c.id,
      resolverId,
      address: c.address,
      state: c.state,
      ageMs: now - c.createdAt,
      queriesCarried: c.queriesCarried,
      inFlight: c.inFlight,
      resumed: c.handshake ? c.handshake.resumed : null,
      verified: c.handshake ? c.handshake.verified : null,
      tlsVersion: c.handshake ? c.handshake.tlsVersion : null,
      cipher: c.handshake ? c.handshake.cipher : null,
      keyGroup: c.handshake ? c.handshake.keyGroup : null,
      classicalOnly: c.handshake ? c.handshake.classicalOnly : null,
      keepaliveMs: c.keepaliveMs ?? null,
      idleTimeoutMs: c.idleTimeoutMs,
      burst: extras.has(c),
    });
  }
  return { connections, open, verified };
}

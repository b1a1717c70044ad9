/**
 * The pool-event translator, written once: a pool's connection events
 * (connection objects, handshake and close infos) become ManagedUpstream
 * events tagged with the pool's transport, and a pool's connections become
 * the status API's snapshot. Pool-backed upstreams (ManagedPool, Fallback)
 * both use it, so what the root sees doesn't depend on which one it holds.
 */
import type { EventEmitter } from 'node:events';
import type { DotstubError } from '../errors.js';
import type { ConnectionSnapshot, ManagedUpstreamEvents, Transport, UpstreamSnapshot } from './managed.js';
import type { Pool } from './pool.js';

/** What the translator reads from a pool. */
export type ObservedPool = Pick<Pool, 'on' | 'connections' | 'isBurstConnection'>;

export interface SideOf {
  /** This side carries queries now. */
  speaks(): boolean;
  /** The failure's words as the user reads them (a fallback adds DoT's failure to DoH's). */
  message(error: DotstubError): string;
}

/** Re-emits `pool`'s events on `to` as ManagedUpstream events. */
export function translatePoolEvents(pool: ObservedPool, transport: Transport, to: EventEmitter<ManagedUpstreamEvents>, side: SideOf): void {
  pool.on('open', (conn, info) => {
    to.emit('open', {
      transport,
      connectionId: conn.id,
      address: info.address,
      resumed: info.resumed,
      verified: info.verified,
      authError: info.authError,
      tlsVersion: info.tlsVersion,
      cipher: info.cipher,
      handshakeMs: info.handshakeMs,
      burst: pool.isBurstConnection(conn),
    });
  });
  pool.on('close', (conn, info) => {
    const lastClosed = side.speaks() && info.wasOpen && !pool.connections.some((c) => c.state === 'open' || c.state === 'connecting');
    to.emit('close', {
      transport,
      connectionId: conn.id,
      reason: info.reason,
      failed: info.failed,
      queriesCarried: info.queriesCarried,
      error: info.error,
      lastClosed,
    });
  });
  pool.on('keepalive', (conn, ms) => to.emit('keepalive', { connectionId: conn.id, timeoutMs: ms }));
  pool.on('race', (r) => to.emit('race', { transport, winner: r.winner, afterMs: r.afterMs, attempts: r.attempts }));
  pool.on('connect-failed', (f) => {
    to.emit('connect-failed', {
      transport,
      address: f.address,
      error: f.error,
      retryInMs: f.retryInMs,
      afterMs: f.afterMs,
      attempts: f.attempts,
      speaks: side.speaks(),
      message: side.message(f.error),
    });
  });
}

/** The status API's view of `pools`' live connections. */
export function snapshotOf(pools: readonly ObservedPool[], resolverId: string): UpstreamSnapshot {
  const now = Date.now();
  const connections: ConnectionSnapshot[] = [];
  let open = false;
  let verified = false;
  for (const p of pools) {
    for (const c of p.connections) {
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
        keepaliveMs: c.keepaliveMs ?? null,
        idleTimeoutMs: c.idleTimeoutMs,
        burst: p.isBurstConnection(c),
      });
    }
  }
  return { connections, open, verified };
}

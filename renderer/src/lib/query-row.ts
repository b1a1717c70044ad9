/**
 * What the query log says about one record: its row's cells and flags and
 * its detail panel's facts. Pure, shared by the rows, the detail panel and
 * the export, so all three say the same thing.
 */
import type { QueryRecord, ResolverView } from '../../../proxy/control/api-types.js';
import { errorText, errorWords } from './error-words.js';
import { formatClock } from './format.js';

/** A resolver's name for a record; the id only if the resolver is no longer configured; '—' for queries never sent. */
export function resolverLabel(resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined, id: string | null): string {
  if (id === null) return '—';
  return resolvers?.find((r) => r.id === id)?.label ?? id;
}

/** "#3 reused", "#4 new (resumed)", "unencrypted (Wi-Fi sign-in)", "not sent". */
export function connectionText(r: Pick<QueryRecord, 'connectionId' | 'reused' | 'handshake'> & { readonly source?: QueryRecord['source'] }): string {
  if (r.source === 'cleartext') return 'unencrypted, network’s resolver';
  if (r.connectionId === null) return 'not sent';
  if (r.reused) return `#${r.connectionId} reused`;
  return `#${r.connectionId} new${r.handshake ? ` (${r.handshake})` : ''}`;
}

/** Who answered the client, in words. */
function answerSourceText(source: QueryRecord['source']): string {
  switch (source) {
    case 'upstream':
      return 'the resolver, over TLS';
    case 'cache':
      return 'the answer cache (no round trip)';
    case 'stale':
      return 'the answer cache, expired: the resolver failed or was slow (TTL 30 s)';
    case 'servfail':
      return 'the proxy (SERVFAIL)';
    case 'error-reply':
      return 'the proxy (error reply)';
    case 'local':
      return 'dotstub itself: a special-use name that is never forwarded';
    case 'cleartext':
      return 'the network’s own resolver, unencrypted: a name the Wi-Fi sign-in needs (never cached)';
  }
}

/** The Resolver fact for a query that no resolver answered: why, in words, rather than a dash. */
function unsentResolverText(r: Pick<QueryRecord, 'error' | 'source'>): string {
  if (r.error) return `none reached: ${errorWords(r.error)}`;
  if (r.source === 'cache' || r.source === 'stale') return 'none needed (answer cache)';
  return 'none (answered by dotstub)';
}

export interface RowFlags {
  /** At or over the slow threshold. */
  readonly slow: boolean;
  /** Anything but NOERROR. */
  readonly bad: boolean;
  /** The row's connection cell highlights a new connection. */
  readonly newConnection: boolean;
}

export function rowFlags(r: Pick<QueryRecord, 'latencyUs' | 'rcode' | 'reused'>, slowUs: number): RowFlags {
  return { slow: r.latencyUs >= slowUs, bad: r.rcode !== 'NOERROR', newConnection: r.reused === false };
}

/** The detail panel's facts, in order: [label, value]. */
export function detailFacts(r: QueryRecord, resolver: string): [string, string][] {
  const facts: [string, string][] = [
    ['Started', `${new Date(r.startedAt).toLocaleDateString()} ${formatClock(r.startedAt)}`],
    ['Client transport', r.transport.toUpperCase()],
    ['Response', r.rcode],
    ['Answer from', answerSourceText(r.source)],
    ['Resolver', r.resolverId === null ? unsentResolverText(r) : resolver],
    ['Connection', connectionText(r)],
    ['Pipelined with', r.depth > 1 ? `${r.depth - 1} other ${r.depth === 2 ? 'query' : 'queries'} in flight` : 'none (alone on the connection)'],
    ['Attempts', r.attempts > 1 ? `${r.attempts} (retried)` : '1'],
  ];
  if (r.truncated) facts.push(['Truncated', 'yes: the client retried over TCP']);
  if (r.error) facts.push(['Error', errorText(r.error)]);
  return facts;
}

/**
 * What the query log says about one record: its row's cells and flags and
 * its detail panel's facts. Pure, shared by the rows, the detail panel and
 * the export, so all three say the same thing.
 */
import type { QueryRecord, ResolverView } from '../../../proxy/control/api-types.js';
import { errorText, errorWords } from './error-words.js';
import { formatDateTime } from './format.js';

/** A resolver's name for a record; the id only if the resolver is no longer configured; '—' for queries never sent. */
export function resolverLabel(resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined, id: string | null): string {
  if (id === null) return '—';
  return resolvers?.find((r) => r.id === id)?.label ?? id;
}

/** Where the name router sent a query (QueryRecord.route), when not to the chosen encrypted resolver. */
type RouteMark = NonNullable<QueryRecord['route']>;

export interface RouteWords {
  readonly kind: RouteMark['kind'];
  /** The row's mark, short enough for a narrow window: "local", "answered here", "refused here". */
  readonly badge: string;
  /** What follows the mark to make the sentence (for screen readers on the row): badge + rest = sentence. */
  readonly rest: string;
  /** The whole of it: "local · your network’s resolver, unencrypted", "answered here, never sent: …". */
  readonly sentence: string;
  /** For a local name: the link and its resolver ("veth0 · 10.99.0.1"); null otherwise. */
  readonly where: string | null;
  /** Why it went there, in words. */
  readonly why: string;
}

const LOCAL_SENTENCE = 'local · your network’s resolver, unencrypted';

/** A record's route in words; null when it went to the chosen encrypted resolver. */
export function routeWords(route: RouteMark | undefined): RouteWords | null {
  if (route === undefined) return null;
  if (route.kind === 'link') {
    return {
      kind: 'link',
      badge: 'local',
      rest: LOCAL_SENTENCE.slice('local'.length),
      sentence: LOCAL_SENTENCE,
      where: `${route.link} · ${route.servers}`,
      why: `a name under ${route.suffix}, which ${route.link} owns (learned from ${route.source}): sent to that network’s own resolver, as the system did before dotstub`,
    };
  }
  const badge = route.kind === 'answered' ? 'answered here' : 'refused here';
  const rest = `, never sent: ${route.why}`;
  return { kind: route.kind, badge, rest, sentence: badge + rest, where: null, why: route.why };
}

/** Why an answer reads as blocked (QueryRecord.blocked). */
type BlockSign = NonNullable<QueryRecord['blocked']>;
type ExtendedError = NonNullable<QueryRecord['extendedErrors']>[number];

export interface BlockedWords {
  readonly kind: BlockSign['kind'];
  /** The whole of it (the detail, on hover): "Blocked by Quad9: malware: lab list", "AdGuard DNS answered 0.0.0.0: the usual way to block". */
  readonly sentence: string;
  /** The row's words, where the resolver has its own column: the sentence for an EDE, "Answered 0.0.0.0: the usual way to block" otherwise. */
  readonly badge: string;
  /** Who refused it: the resolver's name, or "your resolver" when the record names none (an answer from the cache). */
  readonly by: string;
  /** The detail's Why: what the resolver sent, in words. */
  readonly why: string;
}

/** "EDE 15 (Blocked): 'malware: lab list'", or without the text when it sent none. */
export function extendedErrorText(e: ExtendedError): string {
  return `EDE ${e.code} (${e.name})${e.text ? `: ‘${e.text}’` : ''}`;
}

/**
 * Why a record's answer reads as blocked, in words; null when it doesn't.
 * The resolver said so (an Extended DNS Error 15-18): "<code's name> by
 * <resolver>", then its EXTRA-TEXT when it sent one ("Blocked by Quad9:
 * malware"). It answered 0.0.0.0 or :: and said nothing: so said, as the
 * usual way to block, since a real site never has that address.
 */
export function blockedWords(r: Pick<QueryRecord, 'blocked' | 'resolverId'>, resolver: string): BlockedWords | null {
  const b = r.blocked;
  if (b === undefined) return null;
  const by = r.resolverId === null || resolver === '—' ? 'your resolver' : resolver;
  if (b.kind === 'ede') {
    const text = b.text.trim();
    const sentence = `${b.name} by ${by}${text ? `: ${text}` : ''}`;
    return {
      kind: 'ede',
      by,
      sentence,
      badge: sentence,
      why: `${by} refused the name and said why: ${extendedErrorText(b)} (an Extended DNS Error, RFC 8914), passed on to the program unchanged`,
    };
  }
  const who = by === 'your resolver' ? 'Your resolver' : by;
  return {
    kind: 'zero-address',
    by,
    sentence: `${who} answered ${b.address}: the usual way to block`,
    badge: `Answered ${b.address}: the usual way to block`,
    why: `${b.address} is an address that goes nowhere; resolvers and blocklists answer it for a name they refuse, without saying so`,
  };
}

/** "#3 reused", "#4 new (resumed)", "unencrypted (Wi-Fi sign-in)", "not sent". */
export function connectionText(r: Pick<QueryRecord, 'connectionId' | 'reused' | 'handshake'> & { readonly source?: QueryRecord['source']; readonly route?: QueryRecord['route'] }): string {
  if (r.route?.kind === 'link') return 'unencrypted';
  if (r.route) return 'not sent';
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

/** The Resolver cell of a row: the resolver's name, or where the name router sent it. */
export function resolverCellText(r: Pick<QueryRecord, 'route'>, resolver: string): string {
  if (r.route?.kind === 'link') return 'your network’s resolver';
  if (r.route) return 'none (dotstub)';
  return resolver;
}

/**
 * A query sent again on a second connection after its own went silent
 * (proxy/upstream/pool/hedge.ts), in words; null when it was sent once.
 * The record's connection is the one whose answer counted.
 */
export function hedgeText(r: Pick<QueryRecord, 'hedge' | 'connectionId'>): string | null {
  const h = r.hedge;
  if (!h) return null;
  // The record's connection is the one whose answer counted: the copy's, the first's, or a later retry's.
  const answered = r.connectionId === null ? 'no answer came' : `the answer came from #${r.connectionId}`;
  return `on #${h.connectionId} after its connection was silent for ${h.afterMs} ms; ${answered}`;
}

/** The detail panel's facts, in order: [label, value]. */
export function detailFacts(r: QueryRecord, resolver: string): [string, string][] {
  const route = r.route;
  const words = routeWords(route);
  const answerFrom =
    route?.kind === 'link'
      ? `your network’s own resolver, unencrypted (${route.link}, ${route.servers})`
      : route?.kind === 'answered'
        ? 'dotstub itself, never sent'
        : route?.kind === 'refused'
          ? 'nobody: refused here, never sent'
          : answerSourceText(r.source);
  const facts: [string, string][] = [
    ['Started', formatDateTime(r.startedAt)],
    ['Client transport', r.transport.toUpperCase()],
    ['Response', r.rcode],
    ['Answer from', answerFrom],
    ...(words ? [['Why', words.why] as [string, string]] : []),
    ['Resolver', route?.kind === 'link' ? `${route.link}’s resolver ${route.servers} (plain DNS)` : r.resolverId === null ? unsentResolverText(r) : resolver],
    ['Connection', connectionText(r)],
    ['Pipelined with', r.depth > 1 ? `${r.depth - 1} other ${r.depth === 2 ? 'query' : 'queries'} in flight` : 'none (alone on the connection)'],
    ['Attempts', r.attempts > 1 ? `${r.attempts} (retried)` : '1'],
  ];
  const hedge = hedgeText(r);
  if (hedge) facts.push(['Sent again', hedge]);
  if (r.truncated) facts.push(['Truncated', 'yes: the client retried over TCP']);
  if (r.error) facts.push(['Error', errorText(r.error)]);
  const blocked = blockedWords(r, resolver);
  if (blocked) facts.push(['Blocked', blocked.why]);
  // Every EDE the answer carried, the one that blocked included: a DNSSEC failure's or a stale answer's says why too.
  if (r.extendedErrors && r.extendedErrors.length > 0) facts.push(['Extended DNS Error', r.extendedErrors.map(extendedErrorText).join('; ')]);
  return facts;
}

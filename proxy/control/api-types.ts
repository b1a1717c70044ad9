/**
 * The control API's contract, shared by the control server (proxy/control/),
 * the desktop app (app/) and the dashboard (renderer/). Types only: no
 * runtime code, so the renderer can import it without pulling in Node modules.
 *
 * Transport: HTTP/1.1 on loopback (default 127.0.0.1:5380), JSON bodies.
 * Auth: every /api call needs `Authorization: Bearer <token>` (scripts, the
 * desktop app, the dashboard); no cookie is set or accepted. The dashboard
 * link is `/#token=<token>`: the page reads the fragment, which never reaches
 * a server.
 * Host must be a loopback name/address with the right port; state-changing
 * calls (POST/PUT/DELETE) must carry the dashboard's own Origin.
 *
 * Server details (proxy/control/server.ts):
 * - Any /api request carrying a foreign Origin, or Sec-Fetch-Site other than
 *   same-origin/none, is refused (403 forbidden_origin), reads included; no
 *   CORS headers are ever sent. Scripts changing state add
 *   `-H 'Origin: http://127.0.0.1:PORT'`.
 * - Bodies: Content-Type application/json (else 415), at most 64 KiB (413),
 *   valid JSON (400 bad_request), then the schema (400 validation, with
 *   `field`, `fields` and `fieldCodes`).
 * - Every error has a `code` (../error-codes.ts), a `message` and a `hint` (what to do).
 * - `GET /?token=<token>` (the old link form) redirects to `/#token=<token>`;
 *   a wrong token answers 401. Neither sets anything.
 * - Errors always have this ApiError shape.
 *
 * The endpoints (method, path, what each takes and answers, the refusals
 * particular to it) are listed once, in api-client/endpoints.ts: the
 * server's routes and both clients are bound to that table.
 */
import type { ConfigProblem } from '../files/config-file.js';
import type { ApiErrorCode, FieldCode } from '../error-codes.js';
import type { CustomResolverBody, StoredResolver } from '../config/resolver-store.js';
import type { Settings } from '../run/settings.js';
import type { ConnectionEvent, ConnectionSnapshot, NetworkView, PrivacyState, RaceView, StateChange } from '../dotstub.js';
import type { CaptiveEvent, CaptiveView } from '../privacy/captive/session.js';
import type { DnssecView } from '../privacy/dnssec-check.js';
import type { Counters, QueryRecord } from '../engine/query-record.js';
import type { SystemDnsView, TakeoverCause } from '../system-dns/manager.js';
import type { LadderStep } from './ladder.js';
import type { BypassPath, LeakView } from '../network/leak-watch.js';
import type { FailureKind } from '../network/classify.js';
import type { LocalNamesPolicy } from '../network/name-owners.js';
import type { SwitchProbeView } from './switch-probe.js';
import type { ResolverMeasurement, ResolverTestResult, TransportMeasurement } from './resolver-test.js';

// Each contract is defined once, where it is enforced (the zod schemas for
// Settings and CustomResolverBody), and re-exported here for the dashboard.
// The API's own views are defined here and nowhere else: control/'s modules
// (actions/, metrics-window.ts) import them from here, never the reverse, so
// the contract stands below everything that fills it in.
export type { SystemDnsView };
export type { BypassPath, LeakView };
export type { SwitchProbeView, ConnectionEvent, PrivacyState, StateChange, Counters, QueryRecord, Settings, CustomResolverBody, CaptiveView, CaptiveEvent, LadderStep, NetworkView, ResolverMeasurement, ResolverTestResult, TransportMeasurement };
/** A config file dotstub could not use. */
export type ConfigProblemView = ConfigProblem;

/** Stable error codes (../error-codes.ts: each with its sentence, status and hint); the dashboard and scripts branch on these, never on messages. */
export type { ApiErrorCode, FieldCode };

export type ConnectionView = ConnectionSnapshot;

/** GET /api/dashboard-link, on the control socket only: how a browser signs in to the loopback dashboard. */
export interface DashboardLinkView {
  /** http://127.0.0.1:PORT/#token=… */
  readonly url: string;
  /** The loopback API's origin, e.g. http://127.0.0.1:5380. */
  readonly origin: string;
  readonly token: string;
}

export interface ApiError {
  readonly error: {
    readonly code: ApiErrorCode;
    /** What happened this time, for the user. */
    readonly message: string;
    /** What to do about it. */
    readonly hint: string;
    /** The first field at fault (validation failures). */
    readonly field?: string;
    /** Per-field messages for forms: field name → what is wrong and what to do. */
    readonly fields?: Readonly<Record<string, string>>;
    /** Per-field codes, for programs and tests: field name → which kind of wrong. */
    readonly fieldCodes?: Readonly<Record<string, FieldCode>>;
  };
}

export interface ResolverView extends StoredResolver {
  readonly preset: boolean;
  /** A preset's blocking, in words (proxy/config/resolvers.ts PresetSpec.blocking); null for the user's own resolvers (dotstub doesn't know). */
  readonly blocking: string | null;
  /** Median latency of this resolver's answers over the last 5 minutes, ms; null if none. */
  readonly medianLatencyMs: number | null;
}

export interface ResolversView {
  /** The resolver in use now. */
  readonly active: string;
  /**
   * The user's own choice (one of `resolvers`). It is `active` except on a
   * network whose own encrypted resolver the user chose for it (DDR): then
   * `active` is that one, not listed here, and this applies elsewhere.
   */
  readonly chosen: string;
  /**
   * The id of the resolver in use before the last switch (made from any page
   * or `dotstub ctl use`), while it is listed; null before any switch since
   * this start. The dashboard offers "Switch back to …" from it while the
   * active one fails.
   */
  readonly previous: string | null;
  readonly resolvers: readonly ResolverView[];
}

export interface ValidationView {
  readonly ok: boolean;
  readonly fields: Readonly<Record<string, string>>;
  /** Field name → FieldCode, beside each message. */
  readonly fieldCodes: Readonly<Record<string, FieldCode>>;
}

export interface StatusView {
  readonly state: PrivacyState;
  readonly reason: string;
  /** When the current state began, ms since the epoch. */
  readonly since: number;
  /** Plain words: what leaves the machine in this state. */
  readonly leaves: string;
  readonly resolver: ResolverView;
  /** Which transport carries queries: DoT, DoH (port 853 blocked, fallback), or none connected. */
  readonly transport: 'dot' | 'doh' | null;
  /**
   * Why the transport is what it is, for a resolver with a DoH URL (the
   * fallback's last decision, e.g. "port 853 is blocked here; using
   * DNS-over-HTTPS on 443"); null for DoT-only resolvers or before any decision.
   */
  readonly transportReason: string | null;
  /**
   * What the network last did to the active resolver's connections: the
   * classification (the kinds in docs/networks.md#middleboxes, a stable code, a sentence), which
   * transport and address, how long the attempt took; null once a connection
   * of that transport opens (so while DoH carries the queries it still says
   * what happened to DoT).
   */
  readonly network: NetworkView | null;
  /**
   * The captive portal being signed in to (state `captive`): where, found
   * how, whether cleartext lookups of its names are allowed now and until
   * when, which names; null when there is none.
   */
  readonly captive: CaptiveView | null;
  /**
   * The last connection that raced more than one of the resolver's addresses
   * (Happy Eyeballs: IPv6 first, IPv4 250 ms later) and was won: which
   * address won, how fast, and what became of the others; null if none yet.
   */
  readonly race: RaceView | null;
  /**
   * The fallback ladder as it ran for the active resolver since it was
   * chosen or the network last changed: one step per transport and
   * address, DoT first, each with its latest outcome and timing.
   */
  readonly ladder: readonly LadderStep[];
  /**
   * When the resolver was last known good on an open, authenticated
   * connection: now while one is open, else when the last one closed
   * ("private, idle: last verified 40 s ago"); null if never.
   */
  readonly lastVerifiedAt: number | null;
  readonly mode: Settings['mode'];
  readonly listen: readonly string[];
  readonly uptimeMs: number;
  readonly inFlight: number;
  readonly counters: Counters;
  /**
   * Whether lookups can go around dotstub (network/leak-watch.ts), read from
   * the OS at start, on each network change and when resolv.conf is written:
   * the paths found now (a sentence each), and while there are none, since
   * when and across how many network changes; `measured: false` with why
   * when it could not be read. Never a default.
   */
  readonly leaks: LeakView;
  /**
   * Whether the resolver in use validates DNSSEC, measured over its first
   * authenticated connection (privacy/dnssec-check.ts): a signed name with
   * AD, a forged one refused. null: not measured in this run. AD reaches
   * programs only from a verified connection either way.
   */
  readonly dnssec: DnssecView | null;
  /**
   * Moves whenever what is remembered about the networks changes (a fact
   * seen, the plain-DNS verdict, a choice, a network forgotten) or which one
   * we're on: GET /api/networks then says something new. Pushed at once.
   */
  readonly networksRevision: number;
  /**
   * Config files that could not be used at start (corrupt or hand-edited
   * badly), what is wrong and what is used instead. Absent or empty when
   * every file loaded. Cleared for a file once the app saves it.
   */
  readonly problems?: readonly ConfigProblemView[];
  /**
   * A saved choice of a retired preset was moved to its replacement at start
   * (issue 29): the dashboard's banner, until DELETE /api/resolvers/retired-notice.
   * null when there is none to say.
   */
  readonly retiredNotice?: RetiredNoticeView | null;
  /** The control server's own URL, e.g. http://127.0.0.1:5380. */
  readonly control?: string;
}

/** The move away from a retired preset, in words (config/resolvers.ts RETIRED_PRESETS). */
export interface RetiredNoticeView {
  readonly from: string;
  readonly fromLabel: string;
  readonly to: string;
  readonly toLabel: string;
  /** The day the service closed, YYYY-MM-DD. */
  readonly closed: string;
  readonly operator: string;
  /** The operator's own words about the closure. */
  readonly words: string;
  /** When the choice was moved, ms since the epoch. */
  readonly at: number;
  /** "Mullvad DNS closed on 2 Nov 2026; now using Quad9", true when read (control/retired-notice.ts: not connected yet, another resolver in this run, or chosen since). */
  readonly message: string;
}

/** For the desktop app's "Sign in to network" window (its own session, through this proxy only). */
export interface SignInView {
  readonly portalUrl: string;
  readonly proxy: { readonly url: string; readonly username: string; readonly password: string };
}

/** What "Retry now" did; the attempt's outcome follows as a connection event and a state change. */
export interface RetryView {
  /** An attempt started, or starts within the second (false: one is already under way, a connection is open, or the proxy is stopped). */
  readonly started: boolean;
  /** 'scheduled': the last attempt was under a second ago, so this one starts when the second is up (the query-triggered limit). */
  readonly outcome: 'started' | 'scheduled' | 'connected' | 'connecting' | 'closed';
  /** The same in words. */
  readonly message: string;
}

export interface MetricsView {
  /** Share of queries that found an open connection (T-DNS "connection hit"). */
  readonly hitFraction: { readonly sinceStart: number | null; readonly last5m: number | null };
  readonly handshakes: { readonly full: number; readonly resumed: number };
  /** Per resolver id, latency in ms over the last 1 minute and 5 minutes. */
  readonly latency: Readonly<Record<string, { readonly last1m: LatencyStats; readonly last5m: LatencyStats }>>;
  readonly inFlight: number;
  readonly outOfOrder: number;
  readonly retries: number;
  readonly servfails: number;
  readonly mismatches: number;
  /** paddingBytes / bytesToResolver. */
  readonly padding: { readonly paddingBytes: number; readonly bytesToResolver: number; readonly overhead: number | null };
  /** One point per second for the last 5 minutes. */
  readonly series: readonly SeriesPoint[];
  /** Answers that read as blocked, per day (the proxy's local days), newest first: days without one are left out; since the proxy started, a week at most. */
  readonly blocked: readonly BlockedDay[];
  /** The answer cache since start; null when it is off (--cache-size 0). */
  readonly cache: {
    readonly hits: number;
    readonly misses: number;
    /** Expired answers served because the resolver failed or was slow (RFC 8767). */
    readonly stale: number;
    readonly prefetches: number;
    /** hits / (hits + misses); null before the first query. */
    readonly hitRatio: number | null;
    readonly entries: number;
    readonly bytes: number;
    readonly maxBytes: number;
  } | null;
}

export interface BlockedDay {
  /** YYYY-MM-DD, the proxy's local calendar day. */
  readonly day: string;
  /** Refused by the resolver, which said so (an Extended DNS Error 15-18, RFC 8914). */
  readonly byResolver: number;
  /** Answered 0.0.0.0 or :: without a word: the usual way to block. */
  readonly nullAddress: number;
}

export interface SeriesPoint {
  /** Second, ms since the epoch. */
  readonly t: number;
  readonly queries: number;
  /** Queries that went to the resolver (not answered by the cache or locally): the reuse share's denominator. */
  readonly sent: number;
  /** Of those, the ones that found an open connection. */
  readonly hits: number;
  readonly p50: number | null;
  readonly p95: number | null;
}

export interface QueryPage {
  readonly total: number;
  readonly offset: number;
  readonly records: readonly QueryRecord[];
}

export type TimelineEvent =
  | { readonly kind: 'connection'; readonly event: ConnectionEvent }
  /** `takeover`: the user's choice that made the change (system DNS turned on or off, paused, resumed); absent otherwise. */
  | { readonly kind: 'state'; readonly event: StateChange; readonly takeover?: TakeoverCause }
  | {
      readonly kind: 'resolver';
      readonly at: number;
      readonly from: string;
      readonly to: string;
      /** Set when dotstub made the switch, not the user: why (a retired preset's closure, in words). */
      readonly reason?: string;
      /** The resolver switched from, by name, when it is no longer listed (a retired preset). */
      readonly fromLabel?: string;
      /** The resolver switched to, by name, when it isn't listed (a network's own). */
      readonly toLabel?: string;
      /** The switch followed the user's choice for the network we're on (its own encrypted resolver, or back from it). */
      readonly networkChoice?: true;
    }
  | { readonly kind: 'settings'; readonly at: number; readonly changed: readonly string[] }
  | { readonly kind: 'captive'; readonly event: CaptiveEvent };

export interface StreamBatch {
  readonly at: number;
  readonly queries: readonly QueryRecord[];
  /** Queries dropped from this batch to bound its size (they are in the log). */
  readonly skipped: number;
  readonly events: readonly TimelineEvent[];
  readonly counters: Counters;
  readonly inFlight: number;
  /**
   * The API's views as of this batch, so a connected client polls nothing
   * (stream.ts says when each is sent): all of them in the first batch,
   * after any event and every 15 s; connections, metrics and resolvers at
   * most every 2 s while queries arrive. Absent: unchanged.
   */
  readonly views?: StreamViews;
}

/** What GET /api/status, /api/resolvers, /api/connections, /api/metrics and /api/settings answer, carried by the stream. */
export interface StreamViews {
  readonly status?: StatusView;
  readonly resolvers?: ResolversView;
  readonly connections?: readonly ConnectionView[];
  readonly metrics?: MetricsView;
  readonly settings?: Settings;
}

/** GET/PUT /api/network/local-names: the names this network's links own, where they go, and the user's choice for this network. */
export type { LocalNamesView } from '../engine/router.js';

/** Latency over a window, ms; the percentiles are null when the window has no answer. */
export interface LatencyStats {
  readonly count: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

/** One remembered network, as the Network view shows it (GET /api/networks, PUT /api/networks/:key). */
export interface RememberedNetworkView {
  /** The hashed gateway key (never the network in the clear). */
  readonly key: string;
  readonly label: string;
  /** The network we're on now. */
  readonly current: boolean;
  /** The transport that last gave authenticated answers there. */
  readonly worked: 'dot' | 'doh' | null;
  /** What that network did to port 853 when it last failed there; null: nothing (or DoT authenticated since). */
  readonly port853: { readonly kind: FailureKind; readonly classification: string; readonly at: string } | null;
  readonly portal: { readonly seenAt: string; readonly signedIn: boolean } | null;
  /**
   * Something answered DNS there for an address where no DNS server can be
   * (a documentation address): the network intercepts port 53. When last
   * seen, what came back ("NXDOMAIN", "NOERROR with 10.0.0.1") and the address
   * asked; null: never seen there (see dnsCheckedAt for whether it was looked for).
   */
  readonly rewritesDns: { readonly seenAt: string; readonly answeredWith: string; readonly asked: string } | null;
  /** When dotstub last checked that there (whatever it saw); null: never checked there. */
  readonly dnsCheckedAt: string | null;
  /** What the last check could not look at and why ("IPv6 not checked: no route to it from this network (ENETUNREACH)"); null: every address was asked. */
  readonly dnsCheckNote: string | null;
  /**
   * This network has no IPv4: the NAT64 prefix an IPv4 resolver is reached
   * through there, how it was found (asked as ipv4only.arpa, or the
   * well-known one tried without asking) and what was seen; null: not needed there.
   */
  readonly nat64: { readonly prefix: string; readonly how: 'ipv4only.arpa' | 'well-known'; readonly detail: string; readonly at: string } | null;
  /** Median round trip to the resolver from there, ms. */
  readonly rttMs: number | null;
  readonly localDomains: readonly string[];
  /** The user's choice for local names there ('ask': not decided). */
  readonly localNames: LocalNamesPolicy;
  /**
   * The network's own encrypted resolver (RFC 9462, DDR): what its resolver
   * designated when last asked, whether it verified, and the user's choice;
   * null: never asked there.
   */
  readonly ownResolver: OwnResolverView | null;
  readonly firstSeenAt: string | null;
  readonly seenAt: string | null;
}

/** A network's own encrypted resolver, as its card offers it. */
export interface OwnResolverView {
  /** When its resolver was last asked (`_dns.resolver.arpa` SVCB), and which address. */
  readonly checkedAt: string;
  readonly asked: string;
  /** The designation that verified: its certificate covers the address asked and its own name; null: none did. */
  readonly offer: {
    readonly name: string;
    readonly protocol: 'dot';
    readonly port: number;
    readonly addresses: readonly string[];
    readonly dohUrl: string | null;
    readonly verifiedFor: string;
  } | null;
  /** The first designation refused (none verified), and why: a forged one's certificate doesn't cover the address asked. */
  readonly rejected: { readonly name: string; readonly why: string } | null;
  /** Why nothing was offered, in words ("NXDOMAIN: no designated resolver"). */
  readonly detail: string;
  /** The user's choice there: 'use' the offer on that network, or 'ask' (not chosen: the user's own resolver). */
  readonly choice: 'use' | 'ask';
  /** It carries this machine's lookups now (the network we're on, chosen, verified). */
  readonly inUse: boolean;
}

/**
 * GET /api/networks → NetworksView; PUT /api/networks/:key { localNames: 'allow'|'deny'|'ask' } or { ownResolver: 'use'|'ask' } → RememberedNetworkView
 * | 400 | 404; DELETE /api/networks/:key → 204 | 404.
 */
export interface NetworksView {
  /** False when this run remembers nothing (no memory file). */
  readonly remembering: boolean;
  /** At most this many are kept; the least recently seen are forgotten first. */
  readonly max: number;
  /** Networks this machine has been on. */
  readonly networks: readonly RememberedNetworkView[];
  /**
   * Where this run checks whether a network answers DNS for every address:
   * on every network joined (opportunistic mode), only where the user allowed
   * local names (strict mode: the check is a cleartext packet), or nowhere
   * (portal checks off).
   */
  readonly dnsCheck: 'every-network' | 'where-local-names-allowed' | 'off';
  /** Where this run asks a network for its own encrypted resolver: the same rule as dnsCheck (the query is cleartext to the network's resolver). */
  readonly ddrCheck: 'every-network' | 'where-local-names-allowed' | 'off';
  /** Choices a settings import brought for networks this machine hasn't been on yet: kept, and applied there when it is. */
  readonly waiting: number;
}

/** A network's choice as a settings export carries it (what dotstub measured there is learned again, not exported). */
export interface ExportedNetwork {
  readonly key: string;
  readonly label: string;
  readonly localNames: LocalNamesPolicy;
}

/** GET /api/settings/export → SettingsExport (attachment); POST /api/settings/import SettingsExport → ImportResult | 400 (nothing changed). */
export interface SettingsExport {
  readonly dotstub: 'settings';
  readonly version: 1;
  readonly exportedAt: string;
  readonly settings: Settings;
  readonly networks: readonly ExportedNetwork[];
}

export interface ImportResult {
  readonly settings: Settings;
  /** Networks this machine has been on whose choice was applied. */
  readonly networks: number;
  /** Choices for networks this machine hasn't been on yet: kept aside (not listed as networks), applied when it joins one. */
  readonly waiting: number;
}

/**
 * What the proxy tells its observers (the control API, the CLI's log, the
 * tests): typed events, one vocabulary, and the views the status API shows.
 *
 *   'query'       one QueryRecord per answered query
 *   'connection'  open (full/resumed) / close (reason) / keepalive / connect-failed
 *   'state'       privacy-state transitions, each with a reason a user can read
 */
import type { QueryRecord } from './engine/query-record.js';
import type { ListenAddress } from './listen/address.js';
import type { LeakView } from './network/leak-watch.js';
import type { NetworkChange } from './network/watch.js';
import type { CaptiveEvent } from './privacy/captive/session.js';
import type { DnssecView } from './privacy/dnssec-check.js';
import type { PrivacyState } from './privacy/privacy-state.js';
import type { ResolverSwitchTold } from './privacy/resolver-choice.js';
import type { ConnectionEvent, NetworkView, RaceView, StateChange } from './privacy/views.js';
import type { TransportChange } from './upstream/managed.js';

export type { ConnectionEvent, NetworkView, PrivacyState, RaceView, StateChange };

export interface StubProxyEvents {
  query: [QueryRecord];
  connection: [ConnectionEvent];
  state: [StateChange];
  listening: [readonly ListenAddress[]];
  malformed: [string];
  /** The network changed (route, address, resume from sleep) and connections were re-made. */
  'network-change': [NetworkChange];
  /** Something the user should know that didn't stop the proxy. */
  warning: [string];
  /** Which transport carries queries changed (a resolver with a DoH URL: DoT ⇄ DoH), and why. */
  transport: [TransportChange];
  /** A captive portal's story: detected, asking, allowed, names let through, signed in, back to private. */
  captive: [CaptiveEvent];
  /** The leak watch read the OS's state again (or lost its watch): whether lookups can go around dotstub, now. */
  leaks: [LeakView];
  /**
   * The resolver changed by the user's choice for the network we're on
   * (privacy/resolver-choice.ts): to the network's own encrypted resolver on
   * joining it or choosing it, back to the user's own on leaving it or
   * stopping it; why, in words.
   */
  'network-resolver': [ResolverSwitchTold];
  /** Whether the resolver validates DNSSEC was measured (privacy/dnssec-check.ts). */
  dnssec: [DnssecView];
  /** What is remembered about the networks changed (a fact, a verdict, a choice, a network forgotten), or which one we're on: `network.revision` moved. */
  networks: [];
}

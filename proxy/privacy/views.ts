/**
 * What the privacy controller (privacy-controller.ts) tells its observers, on
 * its own emitter, and the views the status API shows of what it saw: the
 * root (dotstub.ts) passes each event on as the proxy's own (events.ts).
 *
 *   'state'       privacy-state transitions, each with a reason a user can read
 *   'connection'  open (full/resumed) / close (reason) / keepalive / connect-failed, each failure classified
 *   'captive'     a captive portal's story
 *   'transport'   which transport carries queries changed, and why
 *   'warning'     something the user should know that didn't stop the proxy
 */
import type { FailureKind } from '../network/classify.js';
import type { AddressAttempt, ManagedClose, ManagedConnectFailure, ManagedKeepalive, ManagedOpen, Transport, TransportChange } from '../upstream/managed.js';
import type { CaptiveEvent } from './captive/session.js';
import type { PrivacyState } from './privacy-words.js';
import type { TakeoverCause } from '../system-dns/view.js';

export interface StateChange {
  readonly state: PrivacyState;
  readonly previous: PrivacyState;
  readonly reason: string;
  readonly at: number;
  readonly resolverId: string;
  /** A change the system-DNS takeover made: the user's choice that made it (turned on or off, paused, resumed); absent otherwise. */
  readonly takeover?: TakeoverCause;
  /** The first or last line of a flapping link's episode (privacy/flap-episode.ts); absent otherwise. */
  readonly episode?: 'start' | 'end';
}

/** What the proxy adds to its upstream's event of the same name: which it is, when, and for which resolver. */
interface Stamp<T extends string> {
  readonly type: T;
  readonly at: number;
  readonly resolverId: string;
}

/** What network/classify.ts makes of a failure: a stable code and a sentence. */
interface Classified {
  /** What the network did, in a stable code and a sentence (network/classify.ts). */
  readonly kind: FailureKind;
  readonly classification: string;
  readonly sentence: string;
}

/**
 * Every field is declared once, upstream, and stamped here: 'open' and
 * 'keepalive' are the upstream's own events (upstream/managed.ts, which
 * extends the connection's handshake); 'close' and 'connect-failed' pick
 * the upstream's fields and add only what they make of them: the error in
 * words, the failure classified. A field added upstream reaches the
 * control API and the CLI's log with no copy here (picked, for the two views).
 */
export type ConnectionEvent =
  | (Stamp<'open'> & ManagedOpen)
  | (Stamp<'close'> &
      Pick<ManagedClose, 'connectionId' | 'reason' | 'failed' | 'queriesCarried'> & {
        /** The error's own words; null: it closed without one. */
        readonly error: string | null;
      })
  | (Stamp<'keepalive'> & ManagedKeepalive)
  | (Stamp<'connect-failed'> &
      /** `transport`: which transport's attempt failed; `afterMs`: how long it took to fail. */
      Pick<ManagedConnectFailure, 'address' | 'message' | 'retryInMs' | 'transport' | 'afterMs'> &
      Classified & {
        /** The error's stable code (error-codes.ts). */
        readonly code: string;
      });

/** The last thing the network did to the active resolver's connections (status API). */
export interface NetworkView extends Classified {
  readonly at: number;
  readonly transport: Transport;
  readonly address: string;
  /** The error's own words, for the curious. */
  readonly detail: string;
  readonly afterMs: number;
  /** Each address tried (Happy Eyeballs: IPv6, then IPv4 250 ms later), its outcome and timing. */
  readonly attempts: readonly AttemptView[];
}

/** One address's part in a connection race, classified when it failed. */
export interface AttemptView {
  readonly address: string;
  /** ms after the race began that this address was tried. */
  readonly startMs: number;
  /** ms from its start to its outcome; null when abandoned because another address won. */
  readonly afterMs: number | null;
  readonly outcome: AddressAttempt['outcome'];
  readonly kind: FailureKind | null;
  readonly classification: string | null;
  readonly sentence: string | null;
}

/** The last connection race that tried more than one address and was won (status API). */
export interface RaceView {
  readonly at: number;
  readonly transport: Transport;
  readonly winner: string;
  /** ms from the race's start to the winner's authentication. */
  readonly afterMs: number;
  readonly attempts: readonly AttemptView[];
}

export interface PrivacyEvents {
  state: [StateChange];
  connection: [ConnectionEvent];
  /** A captive portal's story: detected, asking, allowed, names let through, signed in, back to private. */
  captive: [CaptiveEvent];
  /** Which transport carries queries changed (a resolver with a DoH URL: DoT ⇄ DoH), and why. */
  transport: [TransportChange];
  /** Something the user should know that didn't stop the proxy. */
  warning: [string];
}

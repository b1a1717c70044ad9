/**
 * A link that flaps (a weak Wi-Fi reassociating, a loose cable, a dock)
 * changes the network every second or two. Each change is real, and the
 * live state follows each one (status, the banner, the tray: true within a
 * second); but a line per change in the timeline and the log is a flood
 * that hides everything else (issue 41: 87 lines for a minute of flapping).
 * So the changes of one episode are told as one:
 *
 *   change ─► change within WINDOW_MS ─► episode starts: one line ("the link keeps dropping …")
 *                                        │  every state, connection and network-change line meanwhile: quiet
 *                                        ▼
 *            no change for QUIET_MS ───► episode ends: one line (how many drops, from when to when, and the state now)
 *
 * The first change of an episode is told as it happened (nothing yet says
 * it is one of many). The decision is this module's; what is quiet is the
 * consumers' (the control service's timeline and stream, the CLI's log)
 * to skip, by `quiet`.
 */

/** Two changes of network closer than this are a flap. */
const WINDOW_MS = 10_000;
/** An episode ends once the network has not changed for this long. */
const QUIET_MS = 10_000;

export interface FlapSummary {
  /** Changes of network in the episode (each drop and each return is one). */
  readonly changes: number;
  readonly since: number;
  readonly until: number;
}

export interface FlapEpisodeInit {
  /** The episode began (its first line). */
  readonly started: (changes: number, since: number) => void;
  /** The episode ended (its last line). */
  readonly ended: (summary: FlapSummary) => void;
  readonly now?: () => number;
}

export class FlapEpisode {
  readonly #o: FlapEpisodeInit;
  readonly #now: () => number;
  #lastChangeAt = -Infinity;
  /** The episode under way: its first change and its count; null: none. */
  #episode: { since: number; changes: number } | null = null;
  /** The change before an episode began (it becomes the episode's first). */
  #firstAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(init: FlapEpisodeInit) {
    this.#o = init;
    this.#now = init.now ?? Date.now;
  }

  /** While an episode lasts, the state, connection and network-change lines are quiet (its start and end are told). */
  get quiet(): boolean {
    return this.#episode !== null;
  }

  /** The network changed. */
  changed(): void {
    const now = this.#now();
    if (this.#episode) this.#episode.changes++;
    else if (now - this.#lastChangeAt <= WINDOW_MS) {
      this.#episode = { since: this.#firstAt, changes: 2 };
      this.#o.started(2, this.#firstAt);
    } else this.#firstAt = now;
    this.#lastChangeAt = now;
    if (this.#episode) {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#end(), QUIET_MS);
      this.#timer.unref();
    }
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#episode = null;
  }

  #end(): void {
    const e = this.#episode;
    if (!e) return;
    this.#episode = null;
    this.#o.ended({ changes: e.changes, since: e.since, until: this.#lastChangeAt });
  }
}

const clock = (ms: number): string => new Date(ms).toLocaleTimeString('en-GB');

/** The episode's first line, put before the state's own reason. */
export function flapStartedWords(changes: number, since: number): string {
  return `the link keeps dropping (${changes} changes of network since ${clock(since)}): dotstub reconnects each time it comes back, and tells the rest as one line when it settles`;
}

/** The episode's last line, put before the state's own reason. */
export function flapEndedWords(s: FlapSummary): string {
  return `the link dropped and came back ${Math.ceil(s.changes / 2)} times between ${clock(s.since)} and ${clock(s.until)} (${s.changes} changes of network), and has been steady since`;
}

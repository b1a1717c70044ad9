/**
 * The Network view and the banner's transport line, as plain data from the
 * status (StatusView.ladder, .transport, .transportReason): the fallback
 * ladder as it ran, one line per transport and address — "DoT (port 853) to
 * 9.9.9.9: no answer after 2.5 s — probably blocked"; "DoH to dns.quad9.net
 * (9.9.9.9): OK in 142 ms" — and which transport carries queries and why.
 * Pure.
 */
import type { LadderStep, StatusView } from '../../../proxy/control/api-types.js';

type Race = NonNullable<StatusView['race']>;

/** A duration read at a glance: "142 ms", "2.5 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
}

/** What a failure kind looks like in a ladder line (the proxy's sentence follows as the detail). */
const OUTCOME: Readonly<Record<NonNullable<LadderStep['kind']>, (after: string) => string>> = {
  dropped: (after) => `no answer after ${after} — probably blocked`,
  refused: (after) => `refused after ${after}`,
  unreachable: () => 'no route to it',
  'reset-after-hello': () => 'cut off as the secure connection started — filtered',
  'handshake-stall': (after) => `secure handshake stalled for ${after}`,
  intercepted: () => 'intercepted — certificate not from a trusted authority',
  'name-mismatch': () => 'wrong server — its certificate is for another name',
  resigned: () => 're-signed by a security product',
  'not-tls': () => 'something answered, but not an encrypted DNS server',
  other: (after) => `failed after ${after}`,
};

type StepTone = 'good' | 'danger';

export interface LadderLine {
  readonly key: string;
  readonly tone: StepTone;
  /** "DoT (port 853) to 127.0.0.1" / "DoH to dns.test (127.0.0.1)" */
  readonly target: string;
  /** "OK in 142 ms", "no answer after 2.5 s — probably blocked" */
  readonly outcome: string;
  /** The proxy's sentence for a failure, in full; null when OK. */
  readonly detail: string | null;
  /** "3 attempts in a row", or null for one. */
  readonly attempts: string | null;
  readonly at: number;
}

type StatusPart = Pick<StatusView, 'state' | 'resolver' | 'transport' | 'transportReason' | 'ladder'>;

function dohHost(url: string | undefined): { host: string; port: number } | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return { host: u.hostname, port: u.port === '' ? 443 : Number(u.port) };
  } catch {
    return null;
  }
}

function target(step: LadderStep, status: StatusPart): string {
  if (step.transport === 'dot') return `DNS-over-TLS (port ${status.resolver.port}) to ${step.address}`;
  const doh = dohHost(status.resolver.dohUrl);
  if (!doh) return `DNS-over-HTTPS to ${step.address}`;
  return `DNS-over-HTTPS (port ${doh.port}) to ${doh.host} (${step.address})`;
}

export function ladderLines(status: StatusPart): LadderLine[] {
  return status.ladder.map((step) => {
    const after = formatDuration(step.ms);
    const outcome = step.ok
      ? `OK in ${after}${step.resumed ? ' (resumed session)' : ''}`
      : OUTCOME[step.kind ?? 'other'](after);
    return {
      key: `${step.transport} ${step.address}`,
      tone: step.ok ? 'good' : 'danger',
      target: target(step, status),
      outcome,
      detail: step.ok ? null : step.sentence,
      attempts: step.attempts > 1 ? `${step.attempts} attempts in a row` : null,
      at: step.at,
    };
  });
}

interface RaceLine {
  readonly key: string;
  readonly tone: StepTone | 'neutral';
  /** "IPv6 2620:fe::fe" */
  readonly family: string;
  /** "tried at 0 ms, no route to it" / "tried at 250 ms, won after 41 ms" / "tried at 250 ms, not needed: another address won" */
  readonly outcome: string;
}

export interface RaceModel {
  /** "IPv4 9.9.9.9 won after 291 ms, over DNS-over-TLS" */
  readonly summary: string;
  readonly lines: readonly RaceLine[];
  readonly at: number;
}

/**
 * The last connection race across the resolver's addresses (Happy Eyeballs,
 * RFC 8305): which family won, when each address was tried and what it
 * met; null when no connection raced more than one address.
 */
export function raceModel(race: Race | null): RaceModel | null {
  if (!race) return null;
  const family = (a: string): string => `${a.includes(':') ? 'IPv6' : 'IPv4'} ${a}`;
  const lines = race.attempts.map((a, i): RaceLine => {
    const at = `tried at ${formatDuration(a.startMs)}`;
    if (a.outcome === 'won') return { key: `${i} ${a.address}`, tone: 'good', family: family(a.address), outcome: `${at}, won after ${formatDuration(a.afterMs ?? Number.NaN)}` };
    if (a.outcome === 'abandoned') return { key: `${i} ${a.address}`, tone: 'neutral', family: family(a.address), outcome: `${at}, not needed: another address won first` };
    const why = OUTCOME[a.kind ?? 'other'](formatDuration(a.afterMs ?? Number.NaN));
    return { key: `${i} ${a.address}`, tone: 'danger', family: family(a.address), outcome: `${at}, ${why}` };
  });
  const carrier = race.transport === 'doh' ? 'DNS-over-HTTPS' : 'DNS-over-TLS';
  return { summary: `${family(race.winner)} won after ${formatDuration(race.afterMs)}, over ${carrier}`, lines, at: race.at };
}

export interface TransportModel {
  /** "DNS-over-TLS (port 853)", "DNS-over-HTTPS (port 443)", or "None connected". */
  readonly carrier: string;
  /** Why, in a sentence. */
  readonly why: string;
  readonly transport: 'dot' | 'doh' | null;
}

function capital(s: string): string {
  return s ? `${s[0]!.toUpperCase()}${s.slice(1)}` : s;
}

/** Which transport carries queries and why, for the banner and the Network view. */
export function transportModel(status: StatusPart): TransportModel {
  const doh = dohHost(status.resolver.dohUrl);
  const reason = status.transportReason ? `${capital(status.transportReason.replace(/[.]$/, ''))}.` : null;
  if (status.transport === 'dot') {
    return {
      transport: 'dot',
      carrier: `DNS-over-TLS (port ${status.resolver.port})`,
      why: doh
        ? 'The first choice: port ' + status.resolver.port + ' works here, so DNS-over-HTTPS is not needed.'
        : `The resolver's encrypted DNS port works here.`,
    };
  }
  if (status.transport === 'doh') {
    return {
      transport: 'doh',
      carrier: `DNS-over-HTTPS (port ${doh?.port ?? 443})`,
      why: reason ?? `Port ${status.resolver.port} is blocked here, so dotstub uses DNS-over-HTTPS to the same resolver.`,
    };
  }
  const noFallback = doh ? '' : ` ${status.resolver.label} has no DNS-over-HTTPS address, so there is nothing to fall back to.`;
  return {
    transport: null,
    carrier: 'None connected',
    why: (reason ?? (status.state === 'off' ? 'dotstub is not forwarding DNS.' : 'No encrypted connection is open right now.')) + noFallback,
  };
}

/**
 * What the control API and the supervisor say → TrayState. Pure.
 *
 * While the proxy is not running, its last known resolvers stay in the
 * state (the menu shows them, disabled) and the supervisor's words become
 * the reason: "paused", "restarting in 2 s (exited with code 1: …)".
 */
import type { LocalNamesView, MetricsView, NetworksView, ResolversView, StatusView, SystemDnsView } from '../../proxy/control/api-types.js';
import type { SupervisorState } from '../proxy-process/supervisor.js';
import { localNamesQuestion } from './local-names-question.js';
import { ownResolverOffer } from './own-resolver-offer.js';
import type { TrayResolver, TrayService, TrayState, TraySystemDns } from './types.js';

export interface TrayInputs {
  readonly supervisor: SupervisorState;
  readonly status?: StatusView | undefined;
  readonly resolvers?: ResolversView | undefined;
  readonly metrics?: MetricsView | undefined;
  /** null: this proxy does not manage system DNS. */
  readonly systemDns?: SystemDnsView | null | undefined;
  /** null: routing by name owner is off in this proxy. */
  readonly localNames?: LocalNamesView | null | undefined;
  /** The networks remembered (GET /api/networks): the one we're on may offer its own encrypted resolver. */
  readonly networks?: NetworksView | undefined;
  /** The installed service this app drives; absent when the app runs its own proxy. */
  readonly service?: TrayService | undefined;
}

function traySystemDns(v: SystemDnsView): TraySystemDns {
  return {
    enabled: v.enabled,
    inForce: v.inForce,
    reason: v.problem ?? v.reason,
    blocked: v.privileged ? null : v.privilegeNote,
    ...(v.pausedUntil !== null ? { paused: true } : {}),
  };
}

function supervisorReason(s: SupervisorState): string {
  switch (s.phase) {
    case 'stopped':
      return s.reason;
    case 'starting':
      return s.attempt > 1 ? `starting dotstub (attempt ${s.attempt})` : 'starting dotstub';
    case 'restarting':
      return `dotstub stopped (${s.lastExit}); restarting in ${Math.max(1, Math.round(s.delayMs / 1000))} s`;
    case 'failed':
      return s.reason;
    case 'running':
      return '';
  }
}

export function trayStateFrom(input: TrayInputs): TrayState {
  const service = input.service ? { service: input.service } : {};
  return { ...ownProxyState(input), ...service };
}

function ownProxyState(input: TrayInputs): TrayState {
  const resolvers: TrayResolver[] = (input.resolvers?.resolvers ?? []).map((r) => ({ id: r.id, label: r.label, medianLatencyMs: r.medianLatencyMs }));
  const activeResolverId = input.status?.resolver.id ?? input.resolvers?.active ?? null;
  if (input.supervisor.phase !== 'running') {
    return { privacy: 'off', reason: supervisorReason(input.supervisor), resolvers, activeResolverId, proxyRunning: false, p50Ms: null, captive: null };
  }
  if (!input.status) {
    return { privacy: 'off', reason: 'waiting for dotstub to answer', resolvers, activeResolverId, proxyRunning: true, p50Ms: null, captive: null };
  }
  const p50 = activeResolverId === null ? null : (input.metrics?.latency[activeResolverId]?.last1m.p50 ?? null);
  const c = input.status.captive;
  const captive = c ? { portalHost: c.portalHost, exception: c.exception } : null;
  const localNames = localNamesQuestion(input.status, input.localNames);
  const ownResolver = ownResolverOffer(input.networks);
  return {
    privacy: input.status.state,
    reason: input.status.reason,
    resolvers,
    activeResolverId,
    proxyRunning: true,
    p50Ms: p50,
    captive,
    ...(input.systemDns ? { systemDns: traySystemDns(input.systemDns) } : {}),
    ...(localNames ? { localNames } : {}),
    ...(ownResolver ? { ownResolver } : {}),
  };
}

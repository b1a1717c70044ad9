/** A resolver as the API shows it: its spec, whether it is a preset, and its recent median latency. */
import type { ResolverSpec } from '../config/resolvers.js';
import type { ResolverView } from './api-types.js';

export function resolverView(spec: ResolverSpec, preset: boolean, medianLatencyMs: number | null): ResolverView {
  return {
    id: spec.id,
    label: spec.label,
    addresses: spec.addresses,
    port: spec.port,
    authName: spec.authName ?? null,
    pins: spec.pins,
    ...(spec.dohUrl !== undefined ? { dohUrl: spec.dohUrl } : {}),
    preset,
    medianLatencyMs,
  };
}

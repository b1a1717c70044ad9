/** A resolver as the API shows it: as it is stored, plus whether it is a preset, what it blocks, and its recent median latency. */
import { PRESETS, type ResolverSpec } from '../config/resolvers.js';
import { toStored } from '../config/resolver-store.js';
import type { ResolverView } from './api-types.js';

export function resolverView(spec: ResolverSpec, preset: boolean, medianLatencyMs: number | null): ResolverView {
  return { ...toStored(spec), preset, blocking: preset ? (PRESETS[spec.id]?.blocking ?? null) : null, medianLatencyMs };
}

/** A resolver as the API shows it: as it is stored, plus whether it is a preset and its recent median latency. */
import type { ResolverSpec } from '../config/resolvers.js';
import { toStored } from '../config/resolver-store.js';
import type { ResolverView } from './api-types.js';

export function resolverView(spec: ResolverSpec, preset: boolean, medianLatencyMs: number | null): ResolverView {
  return { ...toStored(spec), preset, medianLatencyMs };
}

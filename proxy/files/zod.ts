/**
 * zod for the proxy's validation (config files, API bodies, the system-DNS
 * journal), loaded the first time something is validated.
 *
 * Why (issue 11, memory): loading zod 4 (its code and what parsing it
 * grows) costs ~12 MiB of RSS (a bare node 42.5 MiB; with `import('zod')`
 * 54.7, both after a full GC), and a proxy started without config files
 * validates nothing until someone uses the API. Loaded through the
 * CommonJS loader so that it can happen synchronously, inside the
 * validators that need it.
 */
import { createRequire } from 'node:module';
import type { z as Zod } from 'zod';

export type ZodApi = typeof Zod;

const require = createRequire(import.meta.url);
let loaded: ZodApi | undefined;

function zod(): ZodApi {
  return (loaded ??= (require('zod') as { z: ZodApi }).z);
}

/** A value built with zod the first time it is asked for (schemas), then kept. */
export function lazily<T>(build: (z: ZodApi) => T): () => T {
  let value: T | undefined;
  return () => (value ??= build(zod()));
}

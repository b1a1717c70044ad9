import type { Engine } from './engine.js';

/**
 * Waits until `engine` has answered what it holds and has been quiet for
 * 100 ms, or `drainMs` passed (a stop that loses no query; StubProxy.stop).
 */
export async function drain(engine: Engine, drainMs: number): Promise<void> {
  const deadline = Date.now() + drainMs;
  const quietMs = 100;
  while (Date.now() < deadline) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([engine.idle(), new Promise<void>((r) => (timer = setTimeout(r, Math.max(1, deadline - Date.now()))))]);
    clearTimeout(timer);
    const quietFor = Date.now() - engine.lastReceivedAt;
    if (engine.inFlight === 0 && quietFor >= quietMs) break;
    await new Promise((r) => setTimeout(r, Math.max(1, quietMs - quietFor)));
  }
}

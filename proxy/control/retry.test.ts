/**
 * "Retry now" (POST /api/retry) against a real proxy: while the resolver is
 * unreachable and the pool is backing off, the button's request makes the
 * proxy try at once, so the resolver coming back is noticed in well under
 * the remaining back-off; it needs the token and our Origin like every
 * change. The status's ladder shows the failed attempts, then the success.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { apiClient, rawRequest, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { waitForEvent, waitForState } from '../../test-support/proxy-harness.js';
import { freePort, startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { ConnectionEvent } from '../dotstub.js';
import type { RetryView, StatusView } from './api-types.js';

let h: ControlHarness | undefined;
let u: UnboundServer | undefined;
afterEach(async () => {
  await h?.stop();
  await u?.stop();
  h = undefined;
  u = undefined;
});

describe('POST /api/retry', () => {
  test('tries the resolver at once instead of after the back-off; refused without our Origin', async () => {
    const port = await freePort();
    h = await startControl({ resolverArg: `127.0.0.1:${port}#dns.test` });
    const api = apiClient(h);
    // Nothing listens yet: refused, and the pool backs off 250 ms, 500 ms, 1 s, 2 s, 4 s …
    let last: Extract<ConnectionEvent, { type: 'connect-failed' }> | undefined;
    h.proxy.on('connection', (e) => {
      if (e.type === 'connect-failed') last = e;
    });
    await waitForEvent(h.proxy, 'connection', () => (last?.retryInMs ?? 0) >= 4000, 8000, 'a back-off of 4 s');
    const failedAt = Date.now();
    const blocked = (await api.get('/api/status')).json<StatusView>();
    expect(blocked.state).toBe('blocked');
    expect(blocked.ladder).toHaveLength(1);
    expect(blocked.ladder[0]).toMatchObject({ transport: 'dot', address: '127.0.0.1', ok: false, kind: 'refused' });
    expect(blocked.ladder[0]?.attempts).toBeGreaterThanOrEqual(5);

    u = await startUnbound({ names: 5, port });
    // Without our Origin: refused, and nothing is tried.
    const foreign = await rawRequest(h.url, '/api/retry', { method: 'POST', headers: { authorization: `Bearer ${h.token}` } });
    expect(foreign.status).toBe(403);
    const noToken = await rawRequest(h.url, '/api/retry', { method: 'POST', headers: { origin: h.origin } });
    expect(noToken.status).toBe(401);

    // The pool tries at most once a second, like a query arriving with no connection up: this
    // request comes sooner after the last failure, so the attempt starts when the second is up.
    const res = await api.post('/api/retry');
    expect(res.status).toBe(200);
    const view = res.json<RetryView>();
    expect(view.started).toBe(true);
    expect(['started', 'scheduled']).toContain(view.outcome);
    await waitForState(h.proxy, 'private', 1500);
    // Well before the back-off would have tried again.
    expect(Date.now() - failedAt).toBeLessThan(3000);
    const ok = (await api.get('/api/status')).json<StatusView>();
    expect(ok.ladder[0]).toMatchObject({ transport: 'dot', ok: true, kind: null, attempts: 1 });

    // Connected: nothing to retry, and it says so.
    const again = (await api.post('/api/retry')).json<RetryView>();
    expect(again).toMatchObject({ started: false, outcome: 'connected' });
    expect(again.message).toMatch(/is connected: nothing to retry/);
  });
});

import { afterEach, describe, expect, test, vi } from 'vitest';
import { NetworkWatch, systemSources, type NetworkChange } from './watch.js';

afterEach(() => vi.useRealTimers());

function watch(): { w: NetworkWatch; net: { routes: string; addresses: string }; changes: NetworkChange[] } {
  const net = { routes: 'eth0 via 0100A8C0', addresses: 'eth0=192.168.0.2' };
  const w = new NetworkWatch({ defaultRoutes: () => net.routes, addresses: () => net.addresses }, { intervalMs: 2000, lateMs: 10_000 });
  const changes: NetworkChange[] = [];
  w.on('change', (c) => changes.push(c));
  return { w, net, changes };
}

describe('noticing network changes', () => {
  test('a new default route, then a new address, each once; nothing while all stays', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { w, net, changes } = watch();
    w.start();
    await vi.advanceTimersByTimeAsync(6000);
    expect(changes).toEqual([]);
    net.routes = 'wlan0 via 0101A8C0';
    await vi.advanceTimersByTimeAsync(2000);
    net.addresses = 'wlan0=10.0.0.7';
    await vi.advanceTimersByTimeAsync(4000);
    expect(changes.map((c) => c.reason)).toEqual(['route', 'address']);
    w.stop();
  });

  test('a timer that fires far too late is a resume from sleep', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { w, changes } = watch();
    w.start();
    // The machine slept: the clock jumps 30 s while no timer could run.
    vi.setSystemTime(Date.now() + 30_000);
    await vi.advanceTimersByTimeAsync(2000);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ reason: 'resume' });
    expect(changes[0]?.sentence).toMatch(/woke from sleep \(a 3\d s gap\)/);
    w.stop();
  });

  test('this machine’s real sources read without error', () => {
    expect(typeof systemSources.defaultRoutes()).toBe('string');
    expect(typeof systemSources.addresses()).toBe('string');
  });
});

import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, onTestFinished, test, vi } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
import { NetworkWatch, systemSources, type NetworkChange, type WatchSources } from './watch.js';

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
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
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
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const { w, changes } = watch();
    w.start();
    // The machine slept: the wall clock jumps 30 s while the monotonic clock (and every timer) stood still.
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

  test('where the kernel notifies: no polling, one look per burst of events, sleep seen at the next event; polling again if the notifications stop', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const net = { routes: 'eth0 via 0100A8C0', addresses: 'eth0=192.168.0.2' };
    let looks = 0;
    let kernel: { event: () => void; gone: () => void } | undefined;
    let unsubscribed = 0;
    const sources: WatchSources = {
      defaultRoutes: () => {
        looks++;
        return net.routes;
      },
      addresses: () => net.addresses,
      subscribe: (event, gone) => {
        kernel = { event, gone };
        return () => unsubscribed++;
      },
    };
    const w = new NetworkWatch(sources, { intervalMs: 2000, lateMs: 10_000, clockCheckMs: 60_000, settleMs: 100 });
    const changes: NetworkChange[] = [];
    w.on('change', (c) => changes.push(c));
    w.start();
    expect(w.notified).toBe(true);
    const startLooks = looks;
    // Idle: nothing read for 59 s (the clock check is once a minute).
    await vi.advanceTimersByTimeAsync(59_000);
    expect(looks).toBe(startLooks);
    // A link coming up: three events, one look, one change.
    net.routes = 'wlan0 via 0101A8C0';
    kernel?.event();
    kernel?.event();
    kernel?.event();
    await vi.advanceTimersByTimeAsync(150);
    expect(looks).toBe(startLooks + 1);
    expect(changes.map((c) => c.reason)).toEqual(['route']);
    // Asleep for 40 s, then the wake-up's own link event: a resume, at once.
    vi.setSystemTime(Date.now() + 40_000);
    kernel?.event();
    await vi.advanceTimersByTimeAsync(150);
    expect(changes.map((c) => c.reason)).toEqual(['route', 'resume']);
    // The notifier died: the watch looks at once and polls every 2 s from then on.
    net.addresses = 'wlan0=10.0.0.7';
    kernel?.gone();
    expect(changes.map((c) => c.reason)).toEqual(['route', 'resume', 'address']);
    expect(w.notified).toBe(false);
    const before = looks;
    await vi.advanceTimersByTimeAsync(4_100);
    expect(looks - before).toBe(2);
    w.stop();
  });
});

const NETNS_MISSING =
  process.platform !== 'linux' ? 'Linux only'
  : process.geteuid?.() !== 0 ? 'needs root (a network namespace of its own)'
  : spawnSync('/usr/sbin/ip', ['-V']).status !== 0 ? '/usr/sbin/ip is not installed'
  : null;

describe('the real kernel notifications (in a network namespace of its own)', skipWith(NETNS_MISSING), () => {
  test('an address added in the namespace reaches the watch through ip monitor within a second, with no polling', async () => {
    const ns = `dotstub-watch-${process.pid}`;
    expect(spawnSync('ip', ['netns', 'add', ns]).status).toBe(0);
    onTestFinished(() => void spawnSync('ip', ['netns', 'del', ns]));
    expect(spawnSync('ip', ['-n', ns, 'link', 'add', 'w0', 'type', 'veth', 'peer', 'name', 'w1']).status).toBe(0);
    // Both ends up: an interface without carrier has no addresses as Node (libuv) lists them.
    for (const dev of ['w0', 'w1']) expect(spawnSync('ip', ['-n', ns, 'link', 'set', dev, 'up']).status).toBe(0);
    // The watch in a process inside the namespace (polling period 1 h: only the kernel can tell it in time).
    const script = `
      import { NetworkWatch } from ${JSON.stringify(path.join(import.meta.dirname, 'watch.ts'))};
      const w = new NetworkWatch(undefined, { intervalMs: 3_600_000, lateMs: 10_000 });
      w.on('change', (c) => console.log('CHANGE ' + c.reason));
      w.start();
      console.log(w.notified ? 'READY notified' : 'READY polling');
      setTimeout(() => process.exit(0), 20_000);`;
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    let out = '';
    const seen = (text: string, ms: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms; output: ${out}`)), ms);
        const look = (): void => {
          if (!out.includes(text)) return;
          clearTimeout(timer);
          child.stdout.off('data', onData);
          resolve();
        };
        const onData = (d: Buffer): void => {
          out += d.toString();
          look();
        };
        child.stdout.on('data', onData);
        look();
      });
    await seen('READY', 15_000);
    expect(out).toContain('READY notified');
    const added = Date.now();
    expect(spawnSync('ip', ['-n', ns, 'addr', 'add', '10.123.0.2/24', 'dev', 'w0']).status).toBe(0);
    await seen('CHANGE address', 5_000);
    // Told by the kernel, not found by a poll (whose period is an hour here).
    expect(Date.now() - added).toBeLessThan(5_000);
  }, 30_000);
});

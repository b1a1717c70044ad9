/**
 * The leak watch read against files of the test's own and a stand-in for
 * busctl (resolved's D-Bus properties as `busctl --json=short` prints them):
 * an extra nameserver is a path around dotstub, said in a sentence; a clean
 * takeover reports none, since when, across how many network changes; what
 * can't be read is "not measured", never a figure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { MANAGED_MARKER } from '../system-dns/resolv-conf.js';
import { LeakWatch, readBypassPaths, type LeakView } from './leak-watch.js';
import type { NetworkServer } from './network-resolver.js';

const ours = (s: NetworkServer): boolean => s.host === '127.0.0.1' && s.port === 53;
const MANAGED = `${MANAGED_MARKER}\nnameserver 127.0.0.1\nsearch lan\n`;

function resolvConf(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-leak-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'resolv.conf');
  fs.writeFileSync(file, text);
  return file;
}

/** resolved's Manager properties: DNSEx rows [ifindex, family, bytes, port, name] and Domains rows [ifindex, domain, routeOnly]. */
function busctl(dns: [number, number, number[], number, string][] | null, domains: [number, string, boolean][]) {
  const asked: string[] = [];
  const run = (argv: readonly string[]): Promise<string | null> => {
    asked.push(argv.join(' '));
    if (argv[0] === 'ip') return Promise.resolve('1: lo: <LOOPBACK,UP>\n7: veth0@if8: <BROADCAST,UP>\n9: wg0: <POINTOPOINT,UP>\n');
    const prop = argv.at(-1);
    if (prop === 'DNSEx') return Promise.resolve(dns === null ? null : JSON.stringify({ type: 'a(iiayqs)', data: dns }));
    if (prop === 'Domains') return Promise.resolve(JSON.stringify({ type: 'a(isb)', data: domains }));
    return Promise.resolve(null);
  };
  return { run, asked };
}
// resolved lists its global loopback server under lo (ifindex 1), as systemd 252+ does.
const DOTSTUB: [number, number, number[], number, string] = [1, 2, [127, 0, 0, 1], 53, ''];
const LAN = 7;
const VPN = 9;

describe('reading the paths around dotstub', () => {
  test('an IPv6 nameserver added beside dotstub in resolv.conf is a path, said with what to do', async () => {
    const file = resolvConf(`${MANAGED}nameserver fd00:99::1\n`);
    const r = await readBypassPaths({ resolvConf: file }, ours);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.paths).toHaveLength(1);
    expect(r.paths[0]).toMatchObject({ what: 'nameserver fd00:99::1', link: 'resolv.conf' });
    expect(r.paths[0]?.sentence).toBe(
      `${file} names fd00:99::1, an IPv6 resolver (usually added from the router's advertisements, RDNSS), besides dotstub: programs may send lookups there unencrypted. To fix: turn private DNS off and on again, and stop whatever adds it (rdnssd, or the link's IPv6 DNS setting).`,
    );
  });

  test("dotstub's own file is clean; a file it didn't write names the LAN's resolver, not dotstub", async () => {
    expect(await readBypassPaths({ resolvConf: resolvConf(MANAGED) }, ours)).toEqual({ ok: true, paths: [] });
    const dhcp = await readBypassPaths({ resolvConf: resolvConf('nameserver 10.99.0.1\nnameserver 127.0.1.1\n') }, ours);
    expect(dhcp.ok && dhcp.paths.map((p) => p.sentence)).toEqual([
      expect.stringContaining('names 10.99.0.1 and not dotstub: programs may send lookups there unencrypted. To fix: turn private DNS on for this machine (System DNS).'),
      expect.stringContaining("names 127.0.1.1, a local forwarder dotstub doesn't control"),
    ]);
    // The listen address itself is dotstub, in a file anyone wrote (a port other than 53: a test's own stub).
    const at = (s: NetworkServer): boolean => s.host === '127.0.0.1' && s.port === 5399;
    expect(await readBypassPaths({ resolvConf: resolvConf('nameserver 127.0.0.1:5399\n') }, at)).toEqual({ ok: true, paths: [] });
  });

  test("behind resolved's stub: a link with ~., and a search-list suffix resolved routes to a link, are paths; a routing-only domain outside the search list is the link's own", async () => {
    const file = resolvConf('nameserver 127.0.0.53\nsearch lan\n');
    const { run } = busctl(
      [DOTSTUB, [LAN, 2, [10, 99, 0, 1], 0, ''], [VPN, 2, [10, 98, 0, 1], 0, '']],
      [[0, '.', true], [LAN, 'lan', false], [VPN, '.', true], [VPN, 'corp.example', true]],
    );
    const r = await readBypassPaths({ resolvConf: file }, ours, run);
    expect(r.ok && r.paths.map((p) => p.what)).toEqual(['search domain lan on veth0', '~. on wg0']);
    expect(r.ok && r.paths[0]?.sentence).toBe(
      'systemd-resolved sends names ending in lan straight to veth0\'s resolver 10.99.0.1, unencrypted and around dotstub, and the search list glues lan onto names that failed, public ones included. To fix: turn private DNS on for this machine with dotstub on port 53 (the dotstub service is): programs then ask dotstub itself, which sends veth0\'s own names there and answers the glued forms.',
    );
    expect(r.ok && r.paths[1]?.sentence).toBe(
      "wg0 routes every domain (~.) to its own resolver 10.98.0.1: systemd-resolved sends some lookups there unencrypted instead of to dotstub. To fix: remove ~. from wg0's DNS domains (resolvectl domain wg0 …), or disconnect the VPN that set it.",
    );
    // A VPN's routing domain, not in the search list: nothing around dotstub.
    const vpn = busctl([DOTSTUB, [VPN, 2, [10, 98, 0, 1], 0, '']], [[0, '.', true], [VPN, 'corp.example', true]]);
    expect(await readBypassPaths({ resolvConf: file }, ours, vpn.run)).toEqual({ ok: true, paths: [] });
    // Routing-only but in the search list (glibc still glues it): a path all the same.
    const routed = busctl([DOTSTUB, [LAN, 2, [10, 99, 0, 1], 0, '']], [[0, '.', true], [LAN, 'lan', true]]);
    expect(await readBypassPaths({ resolvConf: file }, ours, routed.run)).toMatchObject({ ok: true, paths: [{ what: 'search domain lan on veth0' }] });
    // resolved not pointed at dotstub at all.
    const off = busctl([[LAN, 2, [10, 99, 0, 1], 0, '']], []);
    const offPaths = await readBypassPaths({ resolvConf: file }, ours, off.run);
    expect(offPaths.ok && offPaths.paths[0]?.sentence).toBe('systemd-resolved does not send lookups to dotstub: they go to 10.99.0.1 unencrypted. To fix: turn private DNS on for this machine (System DNS).');
  });

  test('resolv.conf naming dotstub, resolved running: a link with ~. is a path for programs that ask resolved directly; its search list is not (glibc asks dotstub)', async () => {
    const { run } = busctl(
      [DOTSTUB, [LAN, 2, [10, 99, 0, 1], 0, ''], [VPN, 2, [10, 98, 0, 1], 0, '']],
      [[0, '.', true], [LAN, 'lan', false], [VPN, '.', true]],
    );
    const r = await readBypassPaths({ resolvConf: resolvConf(`${MANAGED}search lan\n`) }, ours, run);
    expect(r.ok && r.paths.map((p) => p.what)).toEqual(['~. on wg0']);
  });

  test("what can't be read is said, not counted: no file, no nameserver, resolved not answering", async () => {
    expect(await readBypassPaths({ resolvConf: '/nonexistent/resolv.conf' }, ours)).toEqual({ ok: false, why: '/nonexistent/resolv.conf could not be read' });
    expect((await readBypassPaths({ resolvConf: resolvConf('search lan\n') }, ours)).ok).toBe(false);
    const silent = busctl(null, []);
    const r = await readBypassPaths({ resolvConf: resolvConf('nameserver 127.0.0.53\n') }, ours, silent.run);
    expect(r).toEqual({ ok: false, why: expect.stringContaining("its settings could not be read") as string });
    // A file that names dotstub: resolved is still asked (programs that use its API go through it); not answering means
    // it isn't running, so no path through it, and the reading stands.
    const notRunning = busctl(null, []);
    expect(await readBypassPaths({ resolvConf: resolvConf(MANAGED) }, ours, notRunning.run)).toEqual({ ok: true, paths: [] });
    expect(notRunning.asked.length).toBeGreaterThan(0);
  });
});

describe('LeakWatch', () => {
  test('clean since the first reading, network changes counted; a path resets it, its removal starts a new count', async () => {
    const file = resolvConf(MANAGED);
    let now = 1_000;
    const watch = new LeakWatch({ paths: { resolvConf: file }, ours, watchingNetwork: true, now: () => now });
    onTestFinished(() => watch.stop());
    expect(watch.view()).toMatchObject({ measured: false, why: expect.stringContaining('not been read yet') as string });
    await watch.start();
    expect(watch.view()).toEqual({ measured: true, why: null, paths: [], cleanSince: 1_000, networkChanges: 0, checkedAt: 1_000 });
    now = 2_000;
    await watch.networkChanged();
    await watch.networkChanged();
    expect(watch.view()).toMatchObject({ cleanSince: 1_000, networkChanges: 2, checkedAt: 2_000 });

    // The OS adds an IPv6 resolver: seen at the next reading (a network change), no figure while it is there.
    fs.writeFileSync(file, `${MANAGED}nameserver fd00:99::1\n`);
    now = 3_000;
    await watch.networkChanged();
    expect(watch.view()).toMatchObject({ measured: true, cleanSince: null, networkChanges: 0, paths: [{ what: 'nameserver fd00:99::1' }] });
    fs.writeFileSync(file, MANAGED);
    now = 4_000;
    await watch.networkChanged();
    expect(watch.view()).toMatchObject({ measured: true, paths: [], cleanSince: 4_000, networkChanges: 0 });
  });

  test('resolv.conf written is read again by itself (inotify), without a network change', async () => {
    const file = resolvConf(MANAGED);
    const watch = new LeakWatch({ paths: { resolvConf: file }, ours, watchingNetwork: true });
    onTestFinished(() => watch.stop());
    await watch.start();
    expect(watch.view().paths).toEqual([]);
    fs.writeFileSync(file, `${MANAGED}nameserver 2001:db8::53\n`);
    await expect.poll(() => watch.view().paths.map((p) => p.what), { timeout: 10_000 }).toEqual(['nameserver 2001:db8::53']);
  });

  test('a reading that throws is "not measured", and the watch keeps going', async () => {
    const watch = new LeakWatch({ paths: { resolvConf: resolvConf('nameserver 127.0.0.53\n') }, ours, watchingNetwork: true, run: () => Promise.reject(new Error('busctl crashed')) });
    onTestFinished(() => watch.stop());
    await watch.start();
    expect(watch.view()).toMatchObject({ measured: false, cleanSince: null, why: "reading the system's DNS settings failed (busctl crashed)" });
  });

  test('without a network watch nothing is claimed, whatever the file says', async () => {
    const watch = new LeakWatch({ paths: { resolvConf: resolvConf(MANAGED) }, ours, watchingNetwork: false });
    onTestFinished(() => watch.stop());
    await watch.start();
    expect(watch.view()).toMatchObject({ measured: false, cleanSince: null, why: "network changes aren't watched in this run, so a path opened later would go unseen" });
  });
});

describe('LeakWatch tells its observers', () => {
  test('every reading is told at once: a takeover rewriting resolv.conf reaches observers without waiting for anything else', async () => {
    const file = resolvConf('nameserver 10.99.0.1\n');
    const watch = new LeakWatch({ paths: { resolvConf: file }, ours, watchingNetwork: true });
    onTestFinished(() => watch.stop());
    const told: LeakView[] = [];
    watch.onChange((v) => told.push(v));
    await watch.start();
    expect(told.at(-1)).toMatchObject({ measured: true, cleanSince: null, paths: [{ what: 'nameserver 10.99.0.1' }] });
    // The takeover writes dotstub's file; the write alone (inotify) brings the clean reading to observers.
    fs.writeFileSync(file, MANAGED);
    await expect.poll(() => told.at(-1)?.paths.length, { timeout: 2000, interval: 10 }).toBe(0);
    expect(told.at(-1)).toMatchObject({ measured: true, cleanSince: expect.any(Number) as number });
    // A refresh asked for settles only after a reading begun after the ask.
    fs.writeFileSync(file, `${MANAGED}nameserver fd00:99::1\n`);
    await watch.refresh();
    expect(watch.view().paths.map((p) => p.what)).toEqual(['nameserver fd00:99::1']);
  });

  test('a watch that cannot be made (out of inotify watches) or dies is "not measured", never "0 leaked"; a network change tries again and counts afresh', async () => {
    const file = resolvConf(MANAGED);
    let failing = true;
    const made: fs.FSWatcher[] = [];
    const watchDir = (dir: string, listener: (event: string, name: string | null) => void): fs.FSWatcher => {
      if (failing) throw Object.assign(new Error('inotify_add_watch failed'), { code: 'ENOSPC' });
      const w = fs.watch(dir, listener);
      made.push(w);
      return w;
    };
    let now = 1_000;
    const watch = new LeakWatch({ paths: { resolvConf: file }, ours, watchingNetwork: true, watchDir, now: () => now });
    onTestFinished(() => watch.stop());
    const told: LeakView[] = [];
    watch.onChange((v) => told.push(v));
    await watch.start();
    expect(watch.view()).toMatchObject({ measured: false, cleanSince: null, paths: [], why: `changes to ${path.dirname(file)} can't be watched (ENOSPC: the system is out of inotify watches), so a path added later would go unseen` });
    expect(told.at(-1)?.measured).toBe(false);

    failing = false;
    now = 2_000;
    await watch.networkChanged();
    expect(watch.view()).toMatchObject({ measured: true, cleanSince: 2_000, networkChanges: 0 });
    // The watch dies later (the directory's filesystem went away, say): said as such, at once.
    made[0]?.emit('error', Object.assign(new Error('watch died'), { code: 'EIO' }));
    expect(told.at(-1)).toMatchObject({ measured: false, why: expect.stringContaining("can't be watched (EIO)") as string });
    expect(watch.view().measured).toBe(false);
  });

  test("resolved's directory missing is no problem (no resolved here): still measured", async () => {
    const file = resolvConf(MANAGED);
    const watch = new LeakWatch({ paths: { resolvConf: file, resolvedUplink: '/nonexistent/run/systemd/resolve/resolv.conf' }, ours, watchingNetwork: true });
    onTestFinished(() => watch.stop());
    await watch.start();
    expect(watch.view()).toMatchObject({ measured: true, paths: [] });
  });
});

/**
 * The network shapes people are on (issue 41; docs/networks.md#the-network-shapes-people-are-on),
 * each a lab in namespaces (test-support/netlab.ts) with dotstub's CLI in the
 * client as users run it (the network checks on), Debian's unbound serving
 * DoT in the server namespace and the network's own resolver in the router
 * (test-support/lab-dns-server.mjs on 10.53.1.1:53):
 *
 *   IPv4-only (no IPv6 address but link-local, no IPv6 route)
 *     → still answering 15 s after joining and at the next start; the
 *       interception check's IPv6 half says "not checked: no route" (before
 *       the fix the IPv6 probe's ENETUNREACH ended the process within a second)
 *   offline (no default route)  → says it, answers SERVFAIL at once, and is private within 1 s of a route
 *
 * Every address exists only inside the lab.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clientLinkUpCommands, netlabMissing, startNetlab, unboundIn, type Netlab, type NetlabProcess, type NetlabShape } from '../../test-support/netlab.js';
import { labClientArgs, startLabDotstub, type LabDotstub } from '../../test-support/lab-dotstub.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { nat64Missing, startNat64, synthesize96 } from '../../test-support/nat64-lab.js';

const missing = netlabMissing() ?? unboundMissing();
const straceMissing = fs.existsSync('/usr/bin/strace') ? null : 'strace is not installed (apt-get install strace): the offline lab counts wake-ups with it';
const LISTEN_PORT = 5300;

interface ShapeLab {
  readonly lab: Netlab;
  readonly unbound: UnboundServer;
  readonly networkDns: NetlabProcess;
  close(): Promise<void>;
}

async function startShape(shape: NetlabShape): Promise<ShapeLab> {
  const lab = await startNetlab({ shape });
  const parts: { unbound?: UnboundServer; networkDns?: NetlabProcess } = {};
  const close = async (): Promise<void> => {
    await parts.networkDns?.stop();
    await parts.unbound?.stop();
    await lab.close();
  };
  try {
    const a = lab.addresses;
    parts.unbound = await startUnbound({ names: 10, port: 853, launch: unboundIn(lab.server, [a.server4, a.server6]) });
    parts.networkDns = lab.router.spawn([process.execPath, path.resolve(import.meta.dirname, '../../test-support/lab-dns-server.mjs'), a.routerClientSide4, '53', a.routerClientSide4]);
    await parts.networkDns.waitFor('READY');
    return { lab, unbound: parts.unbound, networkDns: parts.networkDns, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The lab of one shape for a describe's tests: started before them, removed after (also when one fails). */
function shapeLab(shape: NetlabShape): ShapeLab {
  const holder = {} as ShapeLab;
  beforeAll(async () => void Object.assign(holder, await startShape(shape)), 60_000);
  afterAll(async () => {
    await holder.close?.();
  });
  return holder;
}

/** One lookup through dotstub in the client: dig's status, or 'NO ANSWER'. */
async function ask(lab: Netlab, name: string, timeS = 3): Promise<string> {
  const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), `+time=${timeS}`, '+tries=1', '+nocookie', name, 'A']);
  return /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER';
}

const alive = (d: LabDotstub): boolean => d.proc.child.exitCode === null && d.proc.child.signalCode === null;

describe('an IPv4-only network, the network checks on', skipWith(missing), () => {
  const s = shapeLab('ipv4-only');

  test('dotstub is still answering 15 s after joining, and at the next start; the check says IPv6 was not checked and why', async () => {
    const dir = path.join(s.lab.dir, 'dotstub-ipv4-only');
    const args = labClientArgs(s.lab, { listenPort: LISTEN_PORT, ca: s.unbound.pki.caFile, mode: 'opportunistic' });
    for (const start of ['first start', 'next start'] as const) {
      const d = await startLabDotstub(s.lab, { dir, args });
      try {
        const here = await d.waitForHere((n) => n.dnsCheckedAt !== null, 10_000, 'checked for DNS interception');
        expect(here.dnsCheckNote, start).toBe('IPv6 not checked: no route to it from this network (ENETUNREACH)');
        // 15 s after it was ready (the first start) — the crash came within a second of the check.
        const until = d.readyAt + (start === 'first start' ? 15_000 : 5000);
        let asked = 0;
        while (Date.now() < until) {
          expect(await ask(s.lab, `n${asked % 10}.test`), `${start}, lookup ${asked + 1}`).toBe('NOERROR');
          expect(alive(d), `${start}: dotstub exited:\n${d.proc.output()}`).toBe(true);
          asked++;
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(d.proc.output()).not.toMatch(/ERR_SOCKET_BAD_PORT|RangeError|uncaught/i);
        console.log(`IPv4-only, ${start}: ${asked} lookups over ${((Date.now() - d.readyAt) / 1000).toFixed(1)} s, all NOERROR; check: ${here.dnsCheckNote}`);
      } finally {
        await d.stop();
      }
    }
  }, 90_000);
});

/** dotstub's host pid: the program nsenter forked (`ip netns exec` execs it), a child of the nsenter this test started. */
function hostPid(d: LabDotstub): number {
  const nsenter = d.proc.child.pid as number;
  return Number(fs.readFileSync(`/proc/${nsenter}/task/${nsenter}/children`, 'utf8').trim().split(/\s+/)[0]);
}

/**
 * How often dotstub's event loop wakes in `ms`: strace on its main thread counts the epoll waits that blocked (a
 * timeout other than 0); each ends in one wake-up. Context switches would count V8's worker handshakes too.
 */
async function loopWakeUps(d: LabDotstub, ms: number): Promise<{ readonly count: number; readonly waits: string }> {
  const file = path.join(d.dir, 'wakeups.strace');
  await new Promise<void>((resolve) => {
    const p = spawn('strace', ['-p', String(hostPid(d)), '-e', 'trace=epoll_wait,epoll_pwait', '-o', file], { stdio: 'ignore' });
    setTimeout(() => p.kill('SIGINT'), ms);
    p.once('exit', () => resolve());
  });
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  // epoll_pwait(13, [...], 1024, 8100, NULL, 8) = 0 — or split by strace into "<unfinished ...>" and "resumed>"
  const waits = lines.map((l) => /epoll_p?wait\(\d+, .*, \d+, (-1|[1-9]\d*)(, NULL, 8)?\)/.exec(l)?.[1]).filter((t): t is string => t !== undefined);
  // The waits' timeouts, ms: who set them (a timer of ours, V8's memory reducer at ~8 s) shows in the figures.
  return { count: waits.length, waits: waits.join(' ') };
}

interface EventsView {
  readonly kind: string;
  readonly event?: { readonly type?: string; readonly state?: string; readonly reason?: string; readonly at?: number; readonly episode?: string };
}

describe('no default route (offline), then a route', skipWith(missing ?? straceMissing), () => {
  const s = shapeLab('offline');

  test('says it is offline, answers SERVFAIL within its 2.5 s hold, stays quiet (≤ 10 wake-ups a minute, no connection attempt until the network changes), and is private within 1 s of a route', async () => {
    const d = await startLabDotstub(s.lab, { args: labClientArgs(s.lab, { listenPort: LISTEN_PORT, ca: s.unbound.pki.caFile, mode: 'strict' }) });
    try {
      // A lookup while offline: answered (SERVFAIL), never silence, after the 2.5 s a query waits for a link coming back
      // (upstream/pool/offline.ts), within a DNS client's first try.
      const t0 = Date.now();
      expect(await ask(s.lab, 'n1.test', 5)).toBe('SERVFAIL');
      const servfailMs = Date.now() - t0;
      expect(servfailMs).toBeLessThan(4000);
      const status = await d.get<{ state: string; reason: string }>('/api/status');
      expect(status.reason).toMatch(/offline|no route/i);
      const failedAttempts = async (): Promise<number> => (await d.get<EventsView[]>('/api/events/recent')).filter((e) => e.kind === 'connection' && e.event?.type === 'connect-failed').length;
      const attemptsBefore = await failedAttempts();
      // Quiet: a minute with nothing asked (not even the API), once the join's one-time checks (interception, DDR, the
      // portal) and the runtime's own clean-up after start (V8's memory reducer: a few collections ~8 s apart) are done.
      await new Promise((r) => setTimeout(r, 20_000));
      const { count: woke, waits } = await loopWakeUps(d, 60_000);
      const attempts = (await failedAttempts()) - attemptsBefore;
      console.log(`offline: SERVFAIL in ${servfailMs} ms; "${status.state}: ${status.reason}"; ${woke} wake-ups (the waits' timeouts, ms: ${waits}) and ${attempts} connection attempts in a minute`);
      expect(woke).toBeLessThanOrEqual(10);
      // Nothing tries on a timer while offline (upstream/pool/offline.ts: the network watch tells when a route comes).
      expect(attempts).toBe(0);
      // A route comes: private again within 1 s.
      const routed = Date.now();
      expect((await s.lab.client.exec(['ip', 'route', 'add', 'default', 'via', s.lab.addresses.routerClientSide4])).code).toBe(0);
      let status2 = 'NO ANSWER';
      while (Date.now() - routed < 5000 && (status2 = await ask(s.lab, 'n2.test', 1)) !== 'NOERROR') await new Promise((r) => setTimeout(r, 50));
      const backMs = Date.now() - routed;
      console.log(`offline → route: private again (n2.test ${status2}) ${backMs} ms after the route came`);
      expect(status2).toBe('NOERROR');
      expect(backMs).toBeLessThan(1000);
      expect((await d.get<{ state: string }>('/api/status')).state).toBe('private');
    } finally {
      await d.stop();
    }
  }, 150_000);
});

describe('dual stack with IPv6 black-holed (addresses and a route, every IPv6 packet dropped)', skipWith(missing), () => {
  const s = shapeLab('dual');

  test('0 failed lookups, the first within the Happy Eyeballs delay of the IPv4 path', async () => {
    const undrop = await s.lab.iptables(['-A', 'FORWARD', '-j', 'DROP'], 6);
    const a = s.lab.addresses;
    const args = ['--listen', `127.0.0.1:${LISTEN_PORT}`, '--resolver', `[${a.server6}],${a.server4}:853#dns.test`, '--ca', s.unbound.pki.caFile, '--strict', '--network-dns', a.routerClientSide4];
    const d = await startLabDotstub(s.lab, { args });
    try {
      const times: number[] = [];
      const failed: string[] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = Date.now();
        const st = await ask(s.lab, `n${i % 10}.test`, 5);
        times.push(Date.now() - t0);
        if (st !== 'NOERROR') failed.push(`#${i + 1}: ${st}`);
      }
      const conns = await d.get<{ address?: string; remote?: string; state?: string }[]>('/api/connections');
      console.log(`IPv6 black-holed: first lookup ${times[0]} ms (dig included), then median ${[...times.slice(1)].sort((x, y) => x - y)[9]} ms; failed: ${failed.length}; connections: ${JSON.stringify(conns.map((c) => c.address ?? c.remote))}`);
      expect(failed).toEqual([]);
      // Happy Eyeballs: IPv4 is tried 250 ms after IPv6 gets no answer, not after IPv6's 2.5 s connect timeout.
      expect(times[0]).toBeLessThan(1000);
    } finally {
      await d.stop();
      await undrop();
    }
  }, 90_000);
});

describe('a link that flaps every 2 s for a minute', skipWith(missing), () => {
  const s = shapeLab('dual');

  test('no crash, at most one handshake per flap, answers whenever the link is up, and one line for the episode, not one per flap', async () => {
    const d = await startLabDotstub(s.lab, { args: labClientArgs(s.lab, { listenPort: LISTEN_PORT, ca: s.unbound.pki.caFile, mode: 'strict' }) });
    try {
      expect(await ask(s.lab, 'n0.test')).toBe('NOERROR');
      const startedAt = Date.now();
      const FLAPS = 30;
      // Down 1 s, up 1 s (routes and neighbours back, as DHCP puts them), 30 times: bounded in count and time.
      const flapping = s.lab.client.exec(['sh', '-c', `for i in $(seq ${FLAPS}); do ip link set eth0 down; sleep 1; ${clientLinkUpCommands('dual')}; sleep 1; done`], { timeoutMs: 90_000 });
      let asked = 0;
      let answered = 0;
      const asking = (async () => {
        while (Date.now() - startedAt < FLAPS * 2000) {
          asked++;
          if ((await ask(s.lab, `n${asked % 10}.test`, 1)) === 'NOERROR') answered++;
          await new Promise((r) => setTimeout(r, 300));
        }
      })();
      await Promise.all([flapping, asking]);
      expect(alive(d), d.proc.output()).toBe(true);
      // Settled: the link stays up; private again.
      await expect.poll(() => ask(s.lab, 'n3.test', 2), { timeout: 10_000 }).toBe('NOERROR');
      // The episode's last line comes once the link has been steady for 10 s.
      const linesAfter = async (): Promise<EventsView[]> => (await d.get<EventsView[]>('/api/events/recent')).filter((e) => (e.event?.at ?? 0) >= startedAt);
      await expect.poll(async () => (await linesAfter()).some((e) => e.kind === 'state' && e.event?.episode === 'end'), { timeout: 20_000 }).toBe(true);
      const after = await linesAfter();
      const states = after.filter((e) => e.kind === 'state');
      const logLines = d.proc.output().split('\n').filter((l) => /network changed|^dotstub: (private|blocked)/.test(l.replace(/^\S+ /, '')));
      const hs = (await d.get<{ handshakes: { full: number; resumed: number } }>('/api/metrics')).handshakes;
      const handshakes = hs.full + hs.resumed;
      console.log(`flapping: ${FLAPS} flaps, ${answered}/${asked} lookups answered, ${handshakes} handshakes in all (${hs.resumed} resumed); ${after.length} timeline lines (${states.length} state lines):\n  ${states.map((e) => `${e.event?.state ?? ''}${e.event?.episode ? ` [${e.event.episode}]` : ''}: ${(e.event?.reason ?? '').slice(0, 160)}`).join('\n  ')}`);
      // At most one handshake per time the link came back (and the first).
      expect(handshakes).toBeLessThanOrEqual(FLAPS + 2);
      // One episode: its first and last lines, and what came before anything said it was one (the first drop and return).
      expect(states.filter((e) => e.event?.episode === 'start')).toHaveLength(1);
      expect(states.filter((e) => e.event?.episode === 'end')).toHaveLength(1);
      expect(after.length).toBeLessThanOrEqual(8);
      expect(logLines.length, logLines.join('\n')).toBeLessThanOrEqual(8);
      // Most lookups made while the link was up are answered (each down second loses what it catches).
      expect(answered / asked).toBeGreaterThan(0.5);
    } finally {
      await d.stop();
    }
  }, 150_000);
});

describe('IPv6-only (no IPv4 address or route), a resolver given by its IPv4 address', skipWith(missing ?? nat64Missing()), () => {
  let s: ShapeLab;
  let zone: NetlabProcess;
  const PREFIX = '2001:db8:64::/96';
  beforeAll(async () => {
    s = await startShape('ipv6-only');
    // The network's own resolver, on its IPv6 address, with a DNS64's answer for ipv4only.arpa (RFC 7050).
    zone = s.lab.router.spawn([
      process.execPath,
      path.resolve(import.meta.dirname, '../../test-support/lab-zone-server.mjs'),
      s.lab.addresses.routerClientSide6,
      '53',
      JSON.stringify({ 'ipv4only.arpa': { AAAA: [synthesize96(PREFIX, '192.0.0.170'), synthesize96(PREFIX, '192.0.0.171')] } }),
    ]);
    await zone.waitFor('READY');
  }, 60_000);
  afterAll(async () => {
    await zone?.stop();
    await s?.close();
  });

  const args = (mode: 'strict' | 'opportunistic'): string[] => {
    const a = s.lab.addresses;
    return ['--listen', `127.0.0.1:${LISTEN_PORT}`, '--resolver', `${a.server4}:853#dns.test`, '--ca', s.unbound.pki.caFile, `--${mode}`, '--network-dns', a.routerClientSide6];
  };

  test("with NAT64/DNS64: the prefix is found by asking ipv4only.arpa, the IPv4 resolver is reached through it, 0 failed lookups, and the card says so", async () => {
    const nat = await startNat64(s.lab, PREFIX);
    try {
      const d = await startLabDotstub(s.lab, { args: args('opportunistic') });
      try {
        const failed: string[] = [];
        const t0 = Date.now();
        for (let i = 0; i < 10; i++) {
          const st = await ask(s.lab, `n${i}.test`, 5);
          if (st !== 'NOERROR') failed.push(`n${i}: ${st}`);
          if (i === 0) console.log(`IPv6-only with NAT64: first lookup ${Date.now() - t0} ms`);
        }
        expect(failed).toEqual([]);
        const here = await d.waitForHere((n) => n.nat64 !== null, 5000, 'NAT64 on the card');
        expect(here.nat64).toMatchObject({ prefix: PREFIX, how: 'ipv4only.arpa' });
        const conns = await d.get<{ address?: string; state?: string }[]>('/api/connections');
        expect(conns.map((c) => c.address)).toContain(nat.synthesize(s.lab.addresses.server4));
        expect(zone.output()).toContain('Q ipv4only.arpa AAAA');
        const status = await d.get<{ state: string; reason: string }>('/api/status');
        console.log(`IPv6-only with NAT64: ${status.state}: ${status.reason}; card: ${JSON.stringify(here.nat64)}; connections to ${conns.map((c) => c.address).join(', ')}`);
        expect(status.state).toBe('private');
      } finally {
        await d.stop();
      }
    } finally {
      await nat.stop();
    }
  }, 90_000);

  test('without NAT64 (the network resolver knows no ipv4only.arpa): a clear "this network has no IPv4" in the reason, SERVFAIL, and no spin', async () => {
    // This network has no DNS64: its resolver answers NXDOMAIN for ipv4only.arpa; nothing translates.
    await zone.stop();
    zone = s.lab.router.spawn([process.execPath, path.resolve(import.meta.dirname, '../../test-support/lab-zone-server.mjs'), s.lab.addresses.routerClientSide6, '53', '{}']);
    await zone.waitFor('READY');
    const d = await startLabDotstub(s.lab, { args: args('opportunistic') });
    try {
      expect(await ask(s.lab, 'n1.test', 5)).toBe('SERVFAIL');
      const here = await d.waitForHere((n) => n.nat64 !== null, 5000, 'the NAT64 search on the card');
      await new Promise((r) => setTimeout(r, 10_000));
      const status = await d.get<{ state: string; reason: string }>('/api/status');
      const attempts = (await d.get<EventsView[]>('/api/events/recent')).filter((e) => e.kind === 'connection' && e.event?.type === 'connect-failed').length;
      console.log(`IPv6-only without NAT64: ${status.state}: ${status.reason}; card: ${JSON.stringify(here.nat64)}; ${attempts} failed attempts in ~12 s`);
      expect(status.state).toBe('blocked');
      expect(status.reason).toMatch(/^this network has no IPv4, and its NAT64 \(64:ff9b::\/96\) did not reach the resolver \(.*\): give your resolver's IPv6 address; /);
      expect(here.nat64).toMatchObject({ prefix: '64:ff9b::/96', how: 'well-known', detail: expect.stringMatching(/NXDOMAIN/) as unknown });
      expect(attempts).toBeLessThanOrEqual(6);
    } finally {
      await d.stop();
    }
  }, 60_000);
});

describe('no check beside the query path can end the proxy (its I/O breaks inside its callbacks)', skipWith(missing), () => {
  const s = shapeLab('ipv4-only');

  test('the interception check, DDR\'s question and the portal check each throw inside their socket callbacks: each says "not checked" and why, and dotstub answers on', async () => {
    const d = await startLabDotstub(s.lab, {
      args: labClientArgs(s.lab, { listenPort: LISTEN_PORT, ca: s.unbound.pki.caFile, mode: 'opportunistic' }),
      nodeArgs: ['--import', path.resolve(import.meta.dirname, '../../test-support/break-io.mjs')],
      env: { DOTSTUB_LAB_BREAK: 'dgram,http' },
    });
    const proc = d.proc;
    try {
      await proc.waitFor('not checked', 20_000);
      // The portal check, asked for (it runs by itself only when encrypted DNS fails).
      expect((await d.send('POST', '/api/captive', { action: 'check' })).code).toBe(200);
      await proc.waitFor(/the Wi-Fi sign-in check: not checked/, 10_000);
      for (let i = 0; i < 10; i++) expect(await ask(s.lab, `n${i}.test`)).toBe('NOERROR');
      expect(proc.child.exitCode, proc.output()).toBeNull();
      const here = (await d.networks()).networks.find((n) => n.current);
      expect(here?.dnsCheckNote).toMatch(/^not checked: injected by the test: a throw inside a check’s UDP connect callback \(EINJECTED\)$/);
      expect(here?.ownResolver?.detail).toMatch(/^not checked at the last join: injected by the test: a throw inside a check’s UDP connect callback \(EINJECTED\)$/);
      const events = await d.get<EventsView[]>('/api/events/recent');
      const portal = events.filter((e) => e.kind === 'captive').map((e) => (e.event as { sentence?: string } | undefined)?.sentence ?? '');
      expect(portal).toContainEqual(expect.stringMatching(/^Sign-in page not checked: injected by the test: a throw inside a check’s HTTP socket callback \(EINJECTED\)$/));
      console.log(`broken check I/O: 10 of 10 lookups answered; the card: "${here?.dnsCheckNote ?? ''}"; DDR: "${here?.ownResolver?.detail ?? ''}"; log:\n  ${proc.output().split('\n').filter((l) => l.includes('not checked')).join('\n  ')}`);
    } finally {
      await d.stop();
    }
  }, 90_000);
});

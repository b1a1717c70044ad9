/**
 * The paper bench's plumbing: traces and linkemu's log parsed right, and in
 * the link lab (root, iproute2, unbound, cc) a quick experiment that yields
 * its table, every peer answering a burst from the client namespace, and
 * nothing left behind: no namespace, no process.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { labMissing, LAB_ROOT, LinkLab, PROFILES } from '../link-lab.js';
import { runSuite } from '../paper.js';
import { PEER_NAMES } from '../peers.js';
import type { Sample } from '../probe.js';
import { Ctx } from './context.js';
import { dataFrom, readLinkLog, steps, synsTo } from './linklog.js';
import { browsingTrace, hitFraction, stubTrace, warmPolicy } from './trace.js';
import { skipWith } from '../../test-support/skips.js';

const ownNamespaces = (): string[] => (spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '').split('\n').filter((l) => l.startsWith(`paper${process.pid}`));
const alive = (pid: number): boolean => fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));

describe('traces and the frame log', () => {
  test('a browsing trace has bursts of 10–40 distinct names, gaps in range, and Zipf-popular names', () => {
    const t = browsingTrace(7, 30, 5000, 10, 300);
    const bursts: { at: number; name: string }[][] = [];
    for (const q of t) {
      const cur = bursts[bursts.length - 1];
      if (cur && q.at - (cur[0]?.at ?? 0) < 5000) cur.push(q);
      else bursts.push([q]);
    }
    expect(bursts).toHaveLength(30);
    for (const b of bursts) {
      expect(b.length).toBeGreaterThanOrEqual(10);
      expect(b.length).toBeLessThanOrEqual(40);
      expect(new Set(b.map((q) => q.name)).size).toBe(b.length);
    }
    const counts = new Map<string, number>();
    for (const q of t) counts.set(q.name, (counts.get(q.name) ?? 0) + 1);
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
    expect(top?.[0]).toBe('n0.test');
    expect(browsingTrace(7, 30, 5000, 10, 300)).toEqual(t);
  });

  test('the hit fraction grows with the idle timeout, and keeping warm while in use costs handshakes', () => {
    const times = stubTrace(3, 8, 1);
    const f = [1, 10, 60, 600].map((s) => hitFraction(times, s));
    for (let i = 1; i < f.length; i++) expect(f[i]).toBeGreaterThanOrEqual(f[i - 1] ?? 0);
    const onDemand = warmPolicy(times, 30, 0);
    const warm = warmPolicy(times, 30, 300);
    expect(warm.hit).toBeGreaterThan(onDemand.hit);
    expect(warm.handshakesPerHour).toBeGreaterThan(onDemand.handshakesPerHour);
  });

  test('linkemu log lines become frames: answers from a port, steps, and SYNs', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-linklog-'));
    try {
      const file = path.join(dir, 'link.log');
      fs.writeFileSync(
        file,
        [
          '# t0_realtime 1000.000000000',
          '0.000 0 fwd 74 tcp 10.77.0.1:40000>10.77.0.2:853 S 1 0 0',
          '10.000 1 fwd 500 tcp 10.77.0.2:853>10.77.0.1:40000 P. 1 1 446',
          '10.100 1 fwd 500 tcp 10.77.0.2:853>10.77.0.1:40000 P. 2 1 446',
          '45.000 1 fwd 500 tcp 10.77.0.2:853>10.77.0.1:40000 P. 3 1 446',
          '46.000 1 LOSS 500 tcp 10.77.0.2:853>10.77.0.1:40000 P. 4 1 446',
          '47.000 1 fwd 66 tcp 10.77.0.2:853>10.77.0.1:40000 . 5 1 0',
          '',
        ].join('\n'),
      );
      const frames = readLinkLog(file);
      expect(frames).toHaveLength(6);
      expect(frames[0]?.at).toBe(1_000_000);
      const data = dataFrom(frames, 853, 1_000_000, 1_000_100);
      expect(data).toHaveLength(3);
      expect(steps(data, 17.5)).toBe(2);
      expect(synsTo(frames, 853)).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const missing = labMissing() ?? (fs.existsSync(path.join(LAB_ROOT, 'dist', 'proxy', 'cli.js')) ? undefined : 'dist/ is not built (npm run build:proxy)');

describe('the link lab', skipWith(missing), () => {
  let lab: LinkLab | undefined;
  let ctx: Ctx | undefined;
  afterEach(async () => {
    await ctx?.stopEverything();
    await lab?.close();
    lab = undefined;
    ctx = undefined;
  });

  test('every peer answers a burst from the client namespace across the link, and closing leaves nothing behind', async () => {
    lab = await LinkLab.open();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-test-'));
    ctx = new Ctx(lab, { quick: true, out }, () => undefined);
    try {
      await lab.setProfile(PROFILES.rtt1);
      const running = await ctx.peers(PEER_NAMES.map((name) => ({ name, label: name })), true);
      const targets = running.map((r) => ({ label: r.spec.label, host: r.peer.host, port: r.peer.port }));
      const res = await ctx.probe<{ runs: { label: string; samples: Sample[] }[] }>({ mode: 'burst', targets, count: 20, rounds: 1, base: 0, idleMs: 100, timeoutMs: 3000 });
      for (const name of PEER_NAMES) {
        const run = res.runs.find((r) => r.label === name);
        expect(run?.samples.filter((s) => s.ms !== null), name).toHaveLength(20);
      }
      const log = readLinkLog(await lab.settledLinkLog());
      for (const r of running) expect(synsTo(log, r.upstream.port).length, `${r.spec.label} connects to its own upstream across the link`).toBeGreaterThanOrEqual(1);
      const pids = running.flatMap((r) => [r.peer.pid, r.upstream.pid]);
      expect(pids.every(alive)).toBe(true);
      await ctx.stopEverything();
      await lab.close();
      expect(ownNamespaces()).toEqual([]);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  test('`paper --quick --only tdns` writes its table (every case at 35 ms near its model) and removes its namespaces', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-test-'));
    try {
      const [report] = await runSuite('paper', ['--quick', '--only', 'tdns', '--no-build', '--out', out]);
      expect(ownNamespaces()).toEqual([]);
      const table = report?.tables[0];
      expect(table?.header).toEqual(['case', '1 ms, as shipped', '1 ms, Nagle off', '35 ms, as shipped', '35 ms, Nagle off', 'T-DNS / model']);
      const row = (what: string): readonly string[] => table?.rows.find((r) => r[0] === what) ?? [];
      // Over a reused connection a query costs one round trip at 35 ms, like UDP; a fresh TCP one costs two.
      for (const what of ['UDP, one at a time', 'TLS, reused, stop-and-wait']) expect(Number.parseFloat(row(what)[4] ?? '')).toBeGreaterThan(0.9);
      expect(Number.parseFloat(row('TLS, reused, stop-and-wait')[4] ?? '')).toBeLessThan(1.6);
      expect(Number.parseFloat(row('TCP, new connection per query')[4] ?? '')).toBeGreaterThan(1.9);
      expect(fs.readFileSync(path.join(out, 'paper-quick.md'), 'utf8')).toContain('T-DNS stub-to-resolver cases');
      expect(fs.existsSync(path.join(out, 'tdns-quick.svg'))).toBe(true);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});

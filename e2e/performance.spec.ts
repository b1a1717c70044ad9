/// <reference lib="dom" />
/**
 * The dashboard under load: 1,000 queries per second from dnsperf through
 * the real proxy, and a log of 100,000 rows. Frame timing is measured in the
 * page with requestAnimationFrame; the numbers are attached to the report.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { QueryRecord, StreamBatch } from '../proxy/control/api-types.js';
import { Dashboard } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';

interface Frames {
  readonly fps: number;
  readonly p95Ms: number;
  readonly maxMs: number;
  readonly longTasks: number;
}

/** Frame intervals over `ms`, while the page does whatever it is doing. */
async function measureFrames(page: Page, ms: number, scrollPxPerSec = 0): Promise<Frames> {
  return page.evaluate(
    ({ ms, scrollPxPerSec }) =>
      new Promise<Frames>((resolve) => {
        let longTasks = 0;
        const obs = new PerformanceObserver((list) => (longTasks += list.getEntries().length));
        try {
          obs.observe({ entryTypes: ['longtask'] });
        } catch {
          // longtask timing not available: count stays 0
        }
        const scroller = document.querySelector('.log-grid');
        const gaps: number[] = [];
        const start = performance.now();
        let last = start;
        const frame = (now: number): void => {
          gaps.push(now - last);
          last = now;
          if (scrollPxPerSec && scroller) scroller.scrollTop = ((now - start) / 1000) * scrollPxPerSec;
          if (now - start < ms) requestAnimationFrame(frame);
          else {
            obs.disconnect();
            gaps.shift();
            gaps.sort((a, b) => a - b);
            resolve({
              fps: (gaps.length * 1000) / (now - start),
              p95Ms: gaps[Math.floor(gaps.length * 0.95)] ?? 0,
              maxMs: gaps.at(-1) ?? 0,
              longTasks,
            });
          }
        };
        requestAnimationFrame(frame);
      }),
    { ms, scrollPxPerSec },
  );
}

function dnsperf(port: number, qps: number, seconds: number): Promise<string> {
  const file = path.join(os.tmpdir(), `dotstub-dnsperf-${process.pid}.txt`);
  fs.writeFileSync(file, Array.from({ length: 200 }, (_, i) => `n${i % 50}.test ${i % 4 === 0 ? 'AAAA' : 'A'}`).join('\n'));
  return new Promise((resolve, reject) => {
    const child = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-Q', String(qps), '-l', String(seconds), '-t', '5'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(t);
      fs.rmSync(file, { force: true });
      resolve(out);
    });
  });
}

test.use({ viewport: { width: 1440, height: 900 } });

test('1,000 queries per second stream in while the log keeps a smooth frame rate', async ({ lab, dashboard }) => {
  test.setTimeout(90_000);
  await dashboard.goTo('Queries');
  const load = dnsperf(lab.proxy.dnsPort, 1000, 8);
  await expect(dashboard.logCount).toContainText(/[1-9][\d,]* queries/);
  // The frame rate measured in the stream's steady state, not its first second: real time, as the load is.
  await dashboard.page.waitForTimeout(1500);
  const frames = await measureFrames(dashboard.page, 4000);
  const report = await load;
  const lost = /Queries lost:\s+(\d+)/.exec(report)?.[1];
  test.info().annotations.push({ type: 'frames at 1,000 qps', description: JSON.stringify(frames) });
  console.log(`frames at 1,000 qps: ${JSON.stringify(frames)}`);
  expect(lost, report).toBe('0');
  // A floor that catches a page that freezes under the stream (a frozen page paints 0–2 frames a
  // second), not a speed measurement: that is the figure printed above (35–60 fps on this shared
  // 2-core machine when idle), and it drops with whatever else runs, so the bound is far below it.
  expect(frames.fps, JSON.stringify(frames)).toBeGreaterThan(5);
  // Everything dnsperf sent reached the page (up to what the stream skipped under load).
  await expect(dashboard.logCount).toContainText(/\d,\d{3} queries/);
});

test('a log of 100,000 rows scrolls and filters smoothly', async ({ lab, page }) => {
  test.setTimeout(90_000);
  // The real proxy serves everything but the first stream, which replays
  // 100,000 synthetic records in 100 batches (as a busy day would).
  const now = Date.now();
  const batches: string[] = [];
  for (let b = 0; b < 100; b++) {
    const queries: QueryRecord[] = [];
    for (let i = 0; i < 1000; i++) {
      const n = b * 1000 + i;
      queries.push({
        seq: 1_000_000 + n,
        startedAt: now - 240_000 + n * 2,
        name: `host${n}.example.test`,
        type: n % 3 ? 'A' : 'AAAA',
        transport: 'udp',
        rcode: n % 50 ? 'NOERROR' : 'NXDOMAIN',
        resolverId: 'lab',
        connectionId: 1 + (n % 2),
        reused: n % 100 !== 0,
        handshake: n % 100 ? null : 'resumed',
        latencyUs: 200 + ((n * 7919) % 30_000),
        queueUs: 10,
        upstreamUs: 150 + ((n * 7919) % 29_000),
        depth: 1 + (n % 4),
        source: 'upstream',
        attempts: 1,
        truncated: false,
        error: null,
      });
    }
    const batch: Omit<StreamBatch, 'counters'> & { counters: null } = { at: now, queries, skipped: 0, events: [], counters: null, inFlight: 0 };
    batches.push(`event: batch\ndata: ${JSON.stringify(batch)}\n\n`);
  }
  let replayed = false;
  await page.route('**/api/stream', async (route) => {
    if (replayed) return route.continue();
    replayed = true;
    await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body: batches.join('') });
  });

  const dashboard = new Dashboard(page);
  await page.goto(lab.proxy.dashboardUrl);
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toContainText('100,000 queries', { timeout: 30_000 });

  // Virtualised: a screenful of rows in the DOM, not 100,000.
  expect(await dashboard.logRows.count()).toBeLessThan(80);
  await expect(dashboard.queryLog).toHaveAttribute('aria-rowcount', '100001');

  // Reading speed (about a screenful a second) and a fling (30,000 rows a second).
  const reading = await measureFrames(page, 3000, 900);
  test.info().annotations.push({ type: 'frames scrolling 100k rows at 900 px/s', description: JSON.stringify(reading) });
  const scrolling = await measureFrames(page, 3000, 1_000_000);
  test.info().annotations.push({ type: 'frames flinging through 100k rows', description: JSON.stringify(scrolling) });
  console.log(`100k rows: reading ${JSON.stringify(reading)}; fling ${JSON.stringify(scrolling)}`);
  // What a broken virtualisation would show, asserted directly: only a screenful of rows is in the
  // DOM, not 100,000. The frame rates are figures (printed above; reading measured 37–48 fps on this
  // shared 2-core machine when idle); their floors only catch a page that stops painting.
  expect(await dashboard.queryLog.getByRole('row').count()).toBeLessThan(200);
  expect(reading.fps, JSON.stringify(reading)).toBeGreaterThan(5);
  expect(scrolling.fps, JSON.stringify(scrolling)).toBeGreaterThan(2);
  await dashboard.queryLog.focus();
  await page.keyboard.press('End');
  await expect(dashboard.row('host0.example.test')).toHaveCount(1); // the oldest, at the bottom

  const t0 = Date.now();
  await dashboard.filterByName('host4242');
  await expect(dashboard.logCount).toContainText('11 queries match'); // host4242, host42420…host42429
  test.info().annotations.push({ type: 'filter 100k rows (ms)', description: String(Date.now() - t0) });
  await dashboard.filterByType('AAAA');
  await expect(dashboard.logRows.first()).toContainText('AAAA');
});

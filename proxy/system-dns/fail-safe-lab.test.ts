/**
 * The fail-safe stop and the crash loop (issue 41; cli.ts, runtime/stops.ts)
 * in the system-DNS lab (namespaces, a copy of /etc; test-support/system-dns-lab.ts):
 * a real dotstub with --system-dns, private DNS turned on through its API as
 * the dashboard does, then an exception thrown inside a timer callback
 * (test-support/throw-later.mjs, loaded with --import: no hook in the product).
 *
 *   1st throw → exits 70 with the reason said; resolv.conf is the original
 *               again at once (not 3-10 s later by the watchdog); stops.json has it
 *   2nd start → says how the last run ended, and takes over again (one crash is no loop)
 *   2nd throw → the same
 *   3rd start → a crash loop: private DNS stays off, the reason says "stopped 2 times in a
 *               minute … off until HH:MM:SS", in the API's privacy state and system DNS view
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { dotstubArgv } from '../../test-support/netlab.js';
import { labForTest, labMissing, type Lab, type LabProcess } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const missing = labMissing();
const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\noptions timeout:1 attempts:1\n';
const STATE = '/run/dotstub-state';
const CONFIG = '/run/dotstub-config';
const READY = `${CONFIG}/ready.json`;
const INJECTOR = path.resolve(import.meta.dirname, '../../test-support/throw-later.mjs');

interface Run {
  readonly proc: LabProcess;
  api(method: 'GET' | 'PUT', route: string, body?: unknown): Promise<{ readonly code: number; readonly body: string }>;
}

async function startDotstub(l: Lab, trigger: string): Promise<Run> {
  await l.exec(['rm', '-f', READY]);
  const args = ['--listen', '127.0.0.1:53', '--resolver', '127.0.0.1:1#dns.test', '--control', '127.0.0.1:0', '--config-dir', CONFIG, '--ready-file', READY, '--system-dns', '--system-dns-state-dir', STATE];
  const [node, ...rest] = dotstubArgv(args);
  const proc = l.spawn([node as string, '--import', INJECTOR, ...rest], { env: { DOTSTUB_LAB_THROW_WHEN: trigger } });
  const deadline = Date.now() + 20_000;
  let ready: { control: string; token: string } | null = null;
  while (ready === null) {
    const r = await l.exec(['cat', READY]);
    if (r.code === 0 && r.stdout.trim()) ready = JSON.parse(r.stdout) as { control: string; token: string };
    else if (Date.now() > deadline) throw new Error(`dotstub did not start:\n${proc.output()}`);
    else await new Promise((res) => setTimeout(res, 100));
  }
  const { control, token } = ready;
  return {
    proc,
    api: async (method, route, body) => {
      const r = await l.exec(['curl', '-sS', '-w', '\n%{http_code}', '--max-time', '5', '-X', method, '-H', `Authorization: Bearer ${token}`, '-H', `Origin: ${control}`, '-H', 'Content-Type: application/json', ...(body === undefined ? [] : ['--data', JSON.stringify(body)]), `${control}${route}`]);
      const lines = r.stdout.trimEnd().split('\n');
      return { code: Number(lines.pop()), body: lines.join('\n') };
    },
  };
}

describe('fail-safe stop and crash loop (lab)', skipWith(missing), () => {
  test('an exception nothing catches gives the DNS back at once and says why; the third start in a minute holds private DNS off and says until when', async () => {
    const l = await labForTest({ resolvConf: { text: ORIGINAL } });
    const resolvConf = (): string => fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
    const trigger = '/run/throw-now';

    for (const round of [1, 2]) {
      const run = await startDotstub(l, trigger);
      if (round === 1) expect((await run.api('PUT', '/api/system-dns', { enabled: true })).code).toBe(200);
      else await run.proc.waitFor('the last run stopped at', 5000);
      await expect.poll(resolvConf, { timeout: 10_000 }).toMatch(/^nameserver 127\.0\.0\.1$/m);
      const thrownAt = Date.now();
      await l.exec(['touch', trigger]);
      const code = await run.proc.exited;
      const tookMs = Date.now() - thrownAt;
      console.log(`fail-safe stop, round ${round}: exited ${code} ${tookMs} ms after the throw`);
      expect(code, run.proc.output()).toBe(70);
      // Given back before the process ended: no watchdog's 3 s, no SIGTERM needed.
      expect(resolvConf()).toBe(ORIGINAL);
      expect(tookMs).toBeLessThan(3000);
      expect(run.proc.output()).toContain('stopping on an error nothing caught: Error [EINJECTED]: injected by the test: a check threw inside its socket callback');
      const stops = JSON.parse((await l.exec(['cat', `${CONFIG}/stops.json`])).stdout) as { stops: { how: string; reason: string }[] };
      expect(stops.stops).toHaveLength(round);
      expect(stops.stops.at(-1)).toMatchObject({ how: 'error', reason: expect.stringContaining('[EINJECTED]') as unknown });
    }

    // The third start within a minute of two stops the same way: a crash loop. The machine keeps its usual DNS.
    const third = await startDotstub(l, '/run/never');
    try {
      await third.proc.waitFor(/dotstub stopped 2 times in a minute \(Error \[EINJECTED\].*\); private DNS is off until \d\d:\d\d:\d\d/, 5000);
      await new Promise((r) => setTimeout(r, 3000));
      expect(resolvConf()).toBe(ORIGINAL);
      const sys = JSON.parse((await third.api('GET', '/api/system-dns')).body) as { inForce: boolean; reason: string };
      expect(sys.inForce).toBe(false);
      expect(sys.reason).toMatch(/^dotstub stopped 2 times in a minute .* private DNS is off until \d\d:\d\d:\d\d so this machine keeps its usual DNS, then it turns back on by itself$/);
      const status = JSON.parse((await third.api('GET', '/api/status')).body) as { state: string; reason: string };
      expect(status).toMatchObject({ state: 'off', reason: sys.reason });
      console.log(`crash loop, third start: ${sys.reason}`);
    } finally {
      await third.proc.signal('TERM');
      await third.proc.exited;
    }
  }, 120_000);
});

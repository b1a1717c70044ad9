/**
 * A power cut with the service enabled, replayed in the lab: the journal of
 * a takeover from an "earlier boot" (another boot id) is on disk and
 * /etc/resolv.conf still names 127.0.0.1. At boot the service starts the
 * proxy (`dotstub --system-dns`, which replays a stale journal when it
 * starts) and, at the same moment, ExecStartPost's `system-dns enable
 * --owner-pid MAINPID` (which replays it too, then takes over again). Both
 * must end with private DNS on, held by the proxy: never with the journal of
 * the new takeover deleted by the other's replay (private DNS silently off,
 * lookups in cleartext to the LAN).
 *
 * The two start together, a bounded number of rounds (the race is
 * timing-dependent: before the journal lock, most rounds lost the takeover).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { dotstubArgv } from '../../test-support/netlab.js';
import { labMissing, labForTest, type Lab, type LabProcess } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const missing = labMissing();

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\noptions timeout:1 attempts:1\n';
const ROUNDS = 12;

/** Leaves the state a power cut leaves: a takeover's journal from another boot, resolv.conf taken over. */
async function powerCut(l: Lab, STATE: string, JOURNAL: string): Promise<void> {
  const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
  expect(on.code, on.stderr).toBe(0);
  const j = JSON.parse((await l.exec(['cat', JOURNAL])).stdout) as { bootId: string };
  j.bootId = '00000000-0000-4000-8000-00000000beef';
  await l.exec(['sh', '-c', `cat > ${JOURNAL} <<'EOF'\n${JSON.stringify(j)}\nEOF`]);
}

/** When each line of a process's output arrived, ms after `t0`. */
function stamp(p: LabProcess, t0: number): { at: (re: RegExp) => number | undefined } {
  const lines: { at: number; text: string }[] = [];
  const add = (d: Buffer): void => {
    for (const text of d.toString().split('\n')) if (text) lines.push({ at: Date.now() - t0, text });
  };
  p.child.stdout?.on('data', add);
  p.child.stderr?.on('data', add);
  return { at: (re) => lines.find((l) => re.test(l.text))?.at };
}

describe('power cut with the service enabled (lab)', skipWith(missing), () => {
  test("the proxy and ExecStartPost's enable replay the old journal at once: private DNS always ends up on, held by the proxy", async () => {
    const l = await labForTest({ resolvConf: { text: ORIGINAL } });
    // On disk like the service's /var/lib/dotstub (not the lab's tmpfs /run): its fsyncs take real time.
    const STATE = path.join(l.dir, 'state');
    const JOURNAL = `${STATE}/system-dns.journal.json`;
    const failures: string[] = [];
    // How much later the proxy starts than enable (ms; negative: enable starts later), steered each
    // round so that both replay at the same moment, dithered around that.
    let offset = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const standIn = await l.dnsServer('127.0.0.1', 53, '10.0.0.53');
      await powerCut(l, STATE, JOURNAL);
      await standIn.stop();
      expect(fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

      const proxyArgs = ['--listen', '127.0.0.1:53', '--resolver', '127.0.0.1:1#dns.test', '--config-dir', '/run/dotstub-config', '--control', '127.0.0.1:0', '--system-dns', '--system-dns-state-dir', STATE];
      // --wait-ms 0: enable replays as soon as it has loaded (the unit's timing before enable waited for the
      // proxy's first answer; waiting narrows the race but doesn't close it).
      const enableArgs = ['system-dns', 'enable', '--owner-pid', 'PID', '--wait-ms', '0', '--state-dir', STATE, '--check-name', ''];
      const dither = [0, -20, 20, -40, 40][round % 5] as number;
      const t0 = Date.now();
      // `sh -c 'sleep; exec'` keeps the PID enable is given.
      const proxy = l.spawn(['sh', '-c', `sleep ${Math.max(0, offset + dither) / 1000}; exec "$@"`, 'sh', ...dotstubArgv(proxyArgs)]);
      const proxyAt = stamp(proxy, t0);
      await proxy.waitFor(/^LABPID \d+$/m, 5000);
      const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1] as string;
      const enable = l.spawn(['sh', '-c', `sleep ${Math.max(0, -(offset + dither)) / 1000}; exec "$@"`, 'sh', ...dotstubArgv(enableArgs.map((a) => (a === 'PID' ? pid : a)))]);
      const enableAt = stamp(enable, t0);
      const code = await enable.exited;
      await proxy.waitFor(/system DNS: (?!found|restored)/, 20_000);
      const pReplay = proxyAt.at(/system DNS: /);
      const eReplay = enableAt.at(/^backend: /);
      if (pReplay !== undefined && eReplay !== undefined) offset = Math.max(-2000, Math.min(2000, offset - (pReplay - eReplay)));
      const journal = (await l.exec(['cat', JOURNAL])).stdout;
      const owner = journal ? (JSON.parse(journal) as { pid: number }).pid : null;
      const conf = fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
      const on = owner === Number(pid) && /^nameserver 127\.0\.0\.1$/m.test(conf);
      if (code !== 0 || !on) {
        failures.push(`round ${round} (replays ${String(eReplay)} / ${String(pReplay)} ms): enable exit ${String(code)}, journal ${owner === null ? 'gone' : `held by ${owner}`}, resolv.conf ${conf.includes('127.0.0.1') ? 'taken over' : 'original'}`);
      }
      await proxy.signal('TERM');
      await proxy.exited;
      // Whatever happened above, the old DNS comes back.
      await l.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', '']);
      expect(fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8')).toBe(ORIGINAL);
    }
    expect(failures).toEqual([]);
  }, 240_000);
});

/**
 * The service's proxy runs without root and changes the machine's DNS only
 * through the root units (unit-helper.ts): what it asks systemd for, what a
 * refusal says, and that the proxy's own takeover code writes nothing then.
 * The root part is played here by the real takeover code on a test root,
 * as dotstub-enable.service and dotstub-disable.service run it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { systemHost, type SystemHost } from './host.js';
import { Journal } from './journal.js';
import { SystemDnsManager } from './manager.js';
import { followRewrites } from './rewrite-note.js';
import { detectBackend, enable, restore } from './takeover.js';
import { unitHelper, type PrivilegedHelper } from './unit-helper.js';

const ORIGINAL = 'nameserver 10.99.0.1\nsearch lab.test\n';
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function testRoot(): { host: SystemHost; state: string; resolv: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-helper-'));
  made.push(root);
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc/resolv.conf'), ORIGINAL);
  const host: SystemHost = { ...systemHost(root), run: async (argv) => ({ code: 1, stdout: '', stderr: `unexpected run: ${argv.join(' ')}`, missing: true }) };
  return { host, state: path.join(root, 'state'), resolv: path.join(root, 'etc/resolv.conf') };
}

describe('the root units, as the proxy asks for them', () => {
  test('enable restarts dotstub-enable.service, disable starts dotstub-disable.service: nothing else, no data', async () => {
    const asked: string[][] = [];
    const host: SystemHost = { ...systemHost('/'), run: async (argv) => (asked.push([...argv]), { code: 0, stdout: '', stderr: '', missing: false }) };
    const h = unitHelper(host);
    await h.enable();
    await h.disable();
    expect(asked).toEqual([
      ['systemctl', 'restart', 'dotstub-enable.service'],
      ['systemctl', 'start', 'dotstub-disable.service'],
    ]);
  });

  test('a refusal by polkit says what is missing and where to look, with a stable code', async () => {
    const host: SystemHost = { ...systemHost('/'), run: async () => ({ code: 1, stdout: '', stderr: 'Failed to restart dotstub-enable.service: Access denied', missing: false }) };
    await expect(unitHelper(host).enable()).rejects.toMatchObject({
      code: 'SYSDNS_NEEDS_ROOT',
      message: expect.stringMatching(/could not point this machine's DNS at dotstub: systemctl restart dotstub-enable\.service said: .*Access denied.*journalctl -u dotstub-enable\.service.*50-dotstub\.rules/),
    });
  });
});

describe('the proxy with the helper (the service)', () => {
  test('turning on, pausing, off and quitting go through the root part; the proxy never writes the DNS files itself', async () => {
    const t = testRoot();
    const calls: string[] = [];
    // The root part: the same code the units run, as root would.
    const helper: PrivilegedHelper = {
      enable: async () => {
        calls.push('enable');
        await enable({ host: t.host, stateDir: t.state }, await detectBackend(t.host, 'resolv.conf'), { port: 53 }, process.pid);
      },
      disable: async () => {
        calls.push('disable');
        await restore({ host: t.host, stateDir: t.state });
      },
    };
    const m = new SystemDnsManager({ host: t.host, stateDir: t.state, port: 53, backend: 'resolv.conf', helper, pollMs: 60_000 });
    await m.start();
    expect(m.privileged).toBe(true);
    const on = await m.enable();
    expect(on.inForce).toBe(true);
    expect(on.owner).toMatchObject({ pid: process.pid, self: true });
    expect(fs.readFileSync(t.resolv, 'utf8')).not.toBe(ORIGINAL);
    const paused = await m.pause(60_000);
    expect(paused.inForce).toBe(false);
    expect(paused.pausedUntil).not.toBeNull();
    expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
    await m.enable();
    await m.disable();
    expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
    await m.enable();
    await m.close();
    expect(calls).toEqual(['enable', 'disable', 'enable', 'disable', 'enable', 'disable']);
    expect(new Journal(t.state).read()).toBeNull();
    expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
  });

  test('turning on while this proxy holds the takeover and it is in force asks the root part nothing (a restart of its unit would give the DNS back first)', async () => {
    const t = testRoot();
    const calls: string[] = [];
    const helper: PrivilegedHelper = {
      enable: async () => {
        calls.push('enable');
        await enable({ host: t.host, stateDir: t.state }, await detectBackend(t.host, 'resolv.conf'), { port: 53 }, process.pid);
      },
      disable: async () => {
        calls.push('disable');
        await restore({ host: t.host, stateDir: t.state });
      },
    };
    const m = new SystemDnsManager({ host: t.host, stateDir: t.state, port: 53, backend: 'resolv.conf', helper, pollMs: 60_000 });
    await m.start();
    expect((await m.enable()).inForce).toBe(true);
    const again = await m.enable();
    expect(again.inForce).toBe(true);
    expect(calls).toEqual(['enable']);
    // Not in force any more (another program's resolv.conf): the root part is asked again.
    fs.writeFileSync(t.resolv, ORIGINAL);
    await m.enable();
    expect(calls).toEqual(['enable', 'enable']);
    await m.close();
    expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
  });

  test('when the root part refuses at quit (systemd at shutdown), the takeover is left to the stop hook, and quitting still ends', async () => {
    const t = testRoot();
    const helper: PrivilegedHelper = {
      enable: async () => void (await enable({ host: t.host, stateDir: t.state }, await detectBackend(t.host, 'resolv.conf'), { port: 53 }, process.pid)),
      disable: () => Promise.reject(new Error('Transaction for dotstub-disable.service/start is destructive')),
    };
    const said: string[] = [];
    const m = new SystemDnsManager({ host: t.host, stateDir: t.state, port: 53, backend: 'resolv.conf', helper, pollMs: 60_000, log: (l) => said.push(l) });
    await m.start();
    await m.enable();
    await m.close();
    expect(said.join('\n')).toContain('the old DNS comes back after the stop: Transaction for dotstub-disable.service/start is destructive');
    // Still held: the service's ExecStopPost (root) gives it back once the proxy has exited.
    expect(new Journal(t.state).read()?.pid).toBe(process.pid);
    await restore({ host: t.host, stateDir: t.state });
  });

  test("another program keeps rewriting the DNS: root's watchdog puts dotstub back, and the proxy tells the user what it did and when it gave up", async () => {
    const t = testRoot();
    const helper: PrivilegedHelper = {
      enable: async () => void (await enable({ host: t.host, stateDir: t.state }, await detectBackend(t.host, 'resolv.conf'), { port: 53 }, process.pid)),
      disable: async () => void (await restore({ host: t.host, stateDir: t.state })),
    };
    const said: string[] = [];
    const m = new SystemDnsManager({ host: t.host, stateDir: t.state, port: 53, backend: 'resolv.conf', helper, pollMs: 50, log: (l) => said.push(l) });
    const reasons: string[] = [];
    m.on('change', (c) => reasons.push(c.reason));
    await m.start();
    await m.enable();
    // Root's watchdog (dotstub-enable.service runs it with --rewrite-watch), with short timing: gives up after 2.
    const rootLog: string[] = [];
    const root = followRewrites(t.host, t.state, (l) => rootLog.push(l), (l) => rootLog.push(l), { maxRewrites: 2, stepMs: 20, pollMs: 50 });
    root.start();
    const dhclient = '# Generated by dhclient\nnameserver 10.99.0.1\n';
    const until = async (what: () => boolean, ms = 5000): Promise<void> => {
      const end = Date.now() + ms;
      while (!what()) {
        if (Date.now() > end) throw new Error(`timed out; proxy said: ${said.join(' | ')}; root said: ${rootLog.join(' | ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      fs.writeFileSync(t.resolv, dhclient);
      await until(() => said.some((l) => l.includes('DNS settings were rewritten by "Generated by dhclient"; the service put dotstub back (1)')));
      expect(fs.readFileSync(t.resolv, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
      expect((await m.refresh()).problem).toBeNull();
      // It keeps at it: after the second put-back, the watch stops fighting and says who.
      const gaveUp = (): boolean => rootLog.some((l) => l.startsWith('another program'));
      for (let i = 2; i <= 3 && !gaveUp(); i++) {
        await until(() => fs.readFileSync(t.resolv, 'utf8').includes('127.0.0.1'));
        fs.writeFileSync(t.resolv, dhclient);
        await until(() => gaveUp() || rootLog.some((l) => l.endsWith(`put dotstub back (${i})`)));
      }
      await until(() => (m.refresh(), said.some((l) => l.startsWith('another program keeps changing DNS'))));
      const view = await m.refresh();
      expect(view.inForce).toBe(false);
      expect(view.problem).toMatch(/^another program keeps changing DNS: "Generated by dhclient"; private DNS is not in force until it stops/);
      expect(reasons.some((r) => r.startsWith('another program keeps changing DNS'))).toBe(true);
      // The user's next choice starts a new takeover: the old story is not told again.
      await m.disable();
      await m.enable();
      expect((await m.refresh()).problem).toBeNull();
    } finally {
      root.stop();
      await m.close();
    }
  });
});

/**
 * The desktop app's logic end to end without Electron: the real proxy
 * (bin/dotstub.js; needs `npm run build:proxy`) under the supervisor, the
 * control client and the tray state, driven by tray actions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTemplate } from './tray/template.js';
import { DesktopController, type DesktopUi } from './desktop-controller.js';
import { ProxySupervisor } from './proxy-process/supervisor.js';
import type { TrayState } from './tray/types.js';
import { skipWith } from '../test-support/skips.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const built = fs.existsSync(path.join(here, '..', 'dist', 'proxy', 'cli.js'));
function until(ctl: DesktopController, match: (s: TrayState) => boolean, ms = 15_000): Promise<TrayState> {
  if (match(ctl.trayState)) return Promise.resolve(ctl.trayState);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ctl.off('tray', on);
      reject(new Error(`tray state not reached in ${ms} ms; last: ${JSON.stringify(ctl.trayState)}`));
    }, ms);
    const on = (s: TrayState): void => {
      if (!match(s)) return;
      clearTimeout(timer);
      ctl.off('tray', on);
      resolve(s);
    };
    ctl.on('tray', on);
  });
}

describe('DesktopController with the real proxy', skipWith(built ? null : 'dist/proxy is not built (npm run build:proxy)'), () => {
  it('shows the proxy in the tray, switches resolver, pauses, resumes and quits', async () => {
    const cfg = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-ctl-test-'));
    onTestFinished(() => fs.rmSync(cfg, { recursive: true, force: true }));
    const supervisor = new ProxySupervisor({
      script: path.join(here, '..', 'bin', 'dotstub.js'),
      args: ['--listen', '127.0.0.1:0', '--resolver', '127.0.0.1:1#dns.test', '--config-dir', cfg],
      readyTimeoutMs: 15_000,
    });
    const ctl = new DesktopController(supervisor, { refreshMs: 1000 });
    onTestFinished(() => ctl.shutdown());
    const reports: string[] = [];
    let quits = 0;
    let dashboards = 0;
    const ui: DesktopUi = { openDashboard: () => dashboards++, quit: () => quits++, report: (m) => reports.push(m), openSignIn: () => reports.push("sign-in window") };

    await ctl.start();
    // The upstream refuses connections: strict mode, so 'blocked' with the proxy's reason.
    const blocked = await until(ctl, (s) => s.proxyRunning && s.privacy === 'blocked' && s.resolvers.length > 0);
    expect(blocked.activeResolverId).toBe('custom:127.0.0.1:1');
    expect(blocked.reason).toMatch(/ECONNREFUSED/);
    expect(blocked.resolvers.map((r) => r.id)).toContain('quad9');
    expect(createTemplate(blocked)[3]).toEqual({ type: 'label', id: 'status', label: 'Private DNS: stopped — failing safe until encrypted DNS works' });

    await ctl.dispatch({ type: 'switch-resolver', id: 'cloudflare' }, ui);
    expect((await until(ctl, (s) => s.activeResolverId === 'cloudflare')).proxyRunning).toBe(true);
    await ctl.dispatch({ type: 'switch-resolver', id: 'no-such-resolver' }, ui);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^Could not switch the resolver: /);

    await ctl.dispatch({ type: 'open-dashboard' }, ui);
    expect(dashboards).toBe(1);
    expect(ctl.client?.dashboardUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=/);

    const pid = supervisor.pid;
    await ctl.dispatch({ type: 'pause' }, ui);
    expect(ctl.trayState).toMatchObject({ proxyRunning: false, privacy: 'off', reason: 'paused', activeResolverId: 'cloudflare' });
    expect(createTemplate(ctl.trayState).some((i) => i.type === 'normal' && i.action.type === 'resume')).toBe(true);
    expect(ctl.client).toBeUndefined();

    await ctl.dispatch({ type: 'resume' }, ui);
    await until(ctl, (s) => s.proxyRunning && s.resolvers.length > 0 && s.activeResolverId !== null);
    expect(supervisor.pid).not.toBe(pid);

    await ctl.dispatch({ type: 'quit' }, ui);
    expect(quits).toBe(1);
    expect(supervisor.state).toEqual({ phase: 'stopped', reason: 'quit' });
  });
});

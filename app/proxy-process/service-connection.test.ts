/**
 * The app's choice between the installed service and its own proxy, and
 * the app driving the service over its control socket: a real app
 * (startApp) serves the socket on a temp path; the environment is faked
 * only where it can't be real here (the unit file's place, pkexec, which
 * here starts that app instead of systemd). The "system" is a resolv.conf
 * copy under a temp root.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test, onTestFinished } from 'vitest';
import { startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { systemHost } from '../../proxy/system-dns/host.js';
import { SystemDnsManager } from '../../proxy/system-dns/manager.js';
import { resolvConfLookup } from '../../proxy/system-dns/os-lookup.js';
import { DesktopController, type DesktopUi } from '../desktop-controller.js';
import { createTemplate } from '../tray/template.js';
import { INITIAL_TRAY_STATE, type MenuItemSpec, type TrayState } from '../tray/types.js';
import { explainSocketError } from '../../proxy/control/socket-access.js';
import { chooseProxy, ServiceConnection } from './service-connection.js';

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\n';
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-svc-'));
  onTestFinished(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** The "service": a real app serving its control API on `sock`, managing the DNS of a resolv.conf copy under `root`. */
async function startService(unbound: UnboundServer, sock: string, root: string): Promise<ControlHarness> {
  return startControl({
    resolverArg: unbound.resolverArg,
    configDir: path.join(root, 'config'),
    socket: { path: sock },
    systemDns: async (dnsPort) => {
      const m = new SystemDnsManager({
        host: systemHost(root),
        stateDir: path.join(root, 'state'),
        port: 53,
        privileged: true,
        lookup: resolvConfLookup(path.join(root, 'etc', 'resolv.conf'), dnsPort),
        pollMs: 200,
        rewriteStepMs: 50,
      });
      await m.start();
      return m;
    },
  });
}

function until(ctl: DesktopController, match: (s: TrayState) => boolean, what: string, ms = 10_000): Promise<TrayState> {
  if (match(ctl.trayState)) return Promise.resolve(ctl.trayState);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ctl.off('tray', on);
      reject(new Error(`${what}: not reached in ${ms} ms; last: ${JSON.stringify(ctl.trayState)}`));
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

const ids = (items: readonly MenuItemSpec[]): string[] => items.map((i) => ('id' in i ? i.id : '-'));
const label = (items: readonly MenuItemSpec[], id: string): string | undefined => {
  const i = items.find((x) => 'id' in x && x.id === id);
  return i && 'label' in i ? i.label : undefined;
};

describe('the app chooses: the installed service, or its own proxy', () => {
  test('a unit file or a socket means the service; neither means its own proxy', () => {
    const d = tempDir();
    const unit = path.join(d, 'dotstub.service');
    const sock = path.join(d, 'control.sock');
    expect(chooseProxy({ socketPath: sock, unitFiles: [unit] })).toBe('own');
    fs.writeFileSync(unit, '[Unit]\n');
    expect(chooseProxy({ socketPath: sock, unitFiles: [unit] })).toBe('service');
    fs.rmSync(unit);
    fs.writeFileSync(sock, '');
    expect(chooseProxy({ socketPath: sock, unitFiles: [unit] })).toBe('service');
  });
});

describe('the app drives the installed service over its socket', () => {
  test('installed but off: "Turn on private DNS…" runs the administrator step once; then the toggle, pause and resume go through the socket; quit leaves the service as it is', async () => {
    const unbound = await startUnbound({ names: 10 });
    onTestFinished(() => unbound.stop());
    const d = tempDir();
    fs.chmodSync(d, 0o755);
    const sock = path.join(d, 'control.sock');
    const unit = path.join(d, 'dotstub.service');
    fs.writeFileSync(unit, '[Unit]\n');
    const root = path.join(d, 'root');
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
    const resolvConf = path.join(root, 'etc', 'resolv.conf');
    fs.writeFileSync(resolvConf, ORIGINAL);

    let service: ControlHarness | undefined;
    onTestFinished(() => service?.stop());
    let turnOns = 0;
    const conn = new ServiceConnection({
      socketPath: sock,
      unitFiles: [unit],
      pollMs: 200,
      // pkexec systemctl enable --now dotstub, as the polkit dialog would let it: the service starts.
      turnOn: async () => {
        turnOns++;
        service = await startService(unbound, sock, root);
      },
    });
    const ctl = new DesktopController(conn, { refreshMs: 500 });
    onTestFinished(() => ctl.shutdown());
    const reports: string[] = [];
    const ui: DesktopUi = { openDashboard: () => undefined, quit: () => undefined, report: (m) => reports.push(m), openSignIn: () => undefined };

    await ctl.start();
    const off = await until(ctl, (s) => s.service?.state === 'off' && s.service.reason !== 'looking for the dotstub service', 'the service seen off');
    const offMenu = createTemplate(off);
    expect(offMenu[0]).toEqual({ type: 'normal', id: 'turn-on-service', label: 'Turn on private DNS…', enabled: true, action: { type: 'turn-on-service' } });
    expect(label(offMenu, 'system-dns-reason')).toBe('Off — the dotstub service is not running');
    expect(ids(offMenu)).not.toContain('pause');
    expect(label(offMenu, 'quit')).toBe('Quit (private DNS stays as it is)');

    await ctl.dispatch({ type: 'turn-on-service' }, ui);
    expect(turnOns).toBe(1);
    expect(reports.at(-1)).toMatch(/^The dotstub service is on/);
    expect(ctl.client?.socketPath).toBe(sock);
    // The window gets the service's dashboard link (handed out on the socket), not one of its own.
    expect(ctl.client?.dashboardUrl).toBe(`${service?.url}/#token=${encodeURIComponent(service?.token ?? '')}`);
    const on = await until(ctl, (s) => s.proxyRunning && s.systemDns !== undefined, 'the service answering');
    expect(createTemplate(on)[0]).toMatchObject({ type: 'checkbox', id: 'system-dns', checked: false, enabled: true });

    await ctl.dispatch({ type: 'set-system-dns', enabled: true }, ui);
    expect(reports.at(-1)).toBe('Private DNS is on for this machine: every program now asks dotstub.');
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

    const enabled = await until(ctl, (s) => s.systemDns?.enabled === true, 'the toggle on');
    expect(createTemplate(enabled).find((i) => 'id' in i && i.id === 'pause')).toMatchObject({ label: 'Pause private DNS for 5 minutes', enabled: true });
    await ctl.dispatch({ type: 'pause' }, ui);
    expect(reports.at(-1)).toMatch(/^Private DNS is paused for 5 minutes/);
    expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
    const paused = await until(ctl, (s) => s.systemDns?.paused === true, 'the tray to show the pause');
    expect(ids(createTemplate(paused))).toContain('resume');
    await ctl.dispatch({ type: 'resume' }, ui);
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

    // Quit: the app stops watching; the service and its takeover stay.
    await ctl.shutdown();
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(fs.statSync(sock).isSocket()).toBe(true);
  }, 60_000);

  test('a socket this user may not open: the tray says so and what to ask for', () => {
    const d = tempDir();
    const sock = path.join(d, 'control.sock');
    // EACCES as the kernel gives it to a user outside the group (this test may run as root, which no mode stops).
    // (setpriv runs a real refused client in proxy/control/control-socket.test.ts and the install lab.)
    const eacces = Object.assign(new Error('connect EACCES'), { code: 'EACCES' });
    const e = explainSocketError(eacces, { socketPath: sock, groupFile: path.join(d, 'no-group-file') });
    expect(e.kind).toBe('denied');
    const state: TrayState = { ...INITIAL_TRAY_STATE, reason: e.message, service: { state: 'denied', reason: e.short, hint: e.hint } };
    const menu = createTemplate(state);
    expect(menu[0]).toMatchObject({ id: 'system-dns', enabled: false });
    expect(label(menu, 'system-dns-reason')).toBe('Not allowed — you are not in the dotstub group');
    expect(label(menu, 'service-hint')).toMatch(/^sudo adduser \S+ dotstub, then log in again$/);
  });
});

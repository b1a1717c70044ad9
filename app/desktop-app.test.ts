/**
 * What a user sees of the desktop app, on the real Electron where its
 * binary is installed and on the stand-in where it is not (the switch:
 * test-support/electron-binary.ts; the driver: test-support/desktop-app.ts).
 * One scenario, run on whichever is here: the app's own proxy for real
 * against a real unbound; the tray names the resolver that proxy reports
 * and offers the dashboard, Pause and Quit; a click on the icon opens the
 * dashboard on the proxy's own origin; Quit from the tray stops the proxy,
 * then the app is gone.
 *
 * Without Electron's binary the real run is skipped with its reason ("npm
 * run electron:install"), and the stand-in runs it; with it, the stand-in's
 * run is skipped and the real Electron's runs. Needs `npm run build:proxy`
 * (and on Electron `npm run build:app` and a display).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { chooseElectron } from '../test-support/electron-binary.js';
import { onElectron, onStandIn, until, type DesktopApp, type TrayItem } from '../test-support/desktop-app.js';
import { skipWith } from '../test-support/skips.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';

// Only the stand-in's run imports app/main.ts into this process; Electron's runs it in Electron.
vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const electron = chooseElectron();
const notBuilt = fs.existsSync(path.join(ROOT, 'dist', 'proxy', 'cli.js')) ? null : 'dist/proxy is not built (npm run build:proxy)';

/** The app's environment: its proxy's flags, and no service. */
type AppEnv = Record<'DOTSTUB_PROXY_ARGS' | 'DOTSTUB_CONTROL_SOCKET', string>;

const runs: { readonly title: string; readonly missing: string | null; readonly start: (env: AppEnv) => Promise<DesktopApp> }[] = [
  { title: 'on Electron', missing: electron.missing ?? null, start: (env) => onElectron(electron.binary as string, { ...process.env, ...env }) },
  {
    title: 'on the stand-in',
    missing: electron.binary ? 'Electron runs these instead (its binary is installed)' : notBuilt,
    start: (env) => {
      // main.ts reads them where it runs: this process.
      Object.assign(process.env, env);
      return onStandIn();
    },
  },
];

const find = (items: readonly TrayItem[], id: string): TrayItem | undefined => {
  for (const i of items) {
    const hit = i.id === id ? i : i.submenu && find(i.submenu, id);
    if (hit) return hit;
  }
  return undefined;
};

for (const run of runs) {
  describe(`the desktop app ${run.title}`, skipWith(run.missing), () => {
    let app: DesktopApp | undefined;
    let unbound: UnboundServer | undefined;
    let tmp = '';
    let origin = '';
    const tray = async (id: string): Promise<TrayItem | undefined> => find(await (app as DesktopApp).trayMenu(), id);
    const labels = async (): Promise<unknown> => (await (app as DesktopApp).trayMenu()).map((i) => i.label);

    beforeAll(async () => {
      unbound = await startUnbound({ names: 10 });
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-desktop-app-'));
      // The takeover is offered on a copy of the system's files: this machine's DNS is never touched.
      const root = path.join(tmp, 'root');
      fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
      fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), 'nameserver 10.99.0.1\n');
      const proxyArgs = [
        '--listen', '127.0.0.1:0',
        '--resolver', unbound.resolverArg,
        '--ca', unbound.pki.caFile,
        '--config-dir', path.join(tmp, 'config'),
        '--system-dns-root', root,
        '--system-dns-state-dir', path.join(root, 'state'),
      ];
      // No service here (a socket that isn't there): the app starts its own proxy.
      app = await run.start({ DOTSTUB_PROXY_ARGS: proxyArgs.join(' '), DOTSTUB_CONTROL_SOCKET: path.join(tmp, 'no-service.sock') });
    }, 60_000);

    afterAll(async () => {
      await app?.close();
      delete process.env.DOTSTUB_PROXY_ARGS;
      delete process.env.DOTSTUB_CONTROL_SOCKET;
      await unbound?.stop();
      if (tmp !== '') fs.rmSync(tmp, { recursive: true, force: true });
    }, 30_000);

    test('the tray: the app\'s own proxy answers, with the resolver it was given; private DNS for the machine not yet on; the dashboard, Pause and Quit on offer', async () => {
      await until(async () => (await tray('open-dashboard'))?.enabled && (await tray('resolvers')), 20_000, 'the proxy to answer', labels);
      expect((await tray('resolvers'))?.label).toBe('Resolver: dns.test (127.0.0.1)');
      // The service-less app's proxy doesn't run this machine's DNS until the user turns it on.
      expect(await tray('system-dns')).toMatchObject({ label: 'Enable private DNS', checked: false });
      expect((await tray('status'))?.label).toBe('Private DNS: off');
      expect(await tray('pause')).toMatchObject({ label: 'Pause private DNS', enabled: true });
      expect((await tray('quit'))?.label).toBe('Quit dotstub');
      expect(await (app as DesktopApp).windows()).toEqual([]);
    }, 30_000);

    test('a click on the icon opens the dashboard on the proxy\'s own origin', async () => {
      await (app as DesktopApp).clickTrayIcon();
      const [win] = await until(async () => ((await (app as DesktopApp).windows()).length > 0 ? await (app as DesktopApp).windows() : undefined), 10_000, 'the dashboard window');
      expect(win?.visible).toBe(true);
      origin = /^http:\/\/127\.0\.0\.1:\d+(?=\/)/.exec(win?.url ?? '')?.[0] ?? '';
      expect(origin, win?.url).not.toBe('');
      // The proxy's control API answers there (not without the token the window holds).
      expect((await fetch(`${origin}/api/status`)).status).toBe(401);
    }, 20_000);

    test('Quit from the tray stops the proxy, then the app is gone', async () => {
      await (app as DesktopApp).clickTrayItem('quit');
      await (app as DesktopApp).exited(20_000);
      await expect(fetch(`${origin}/api/status`)).rejects.toThrow();
    }, 30_000);
  });
}

/**
 * app/main.ts's wiring, run for real against a stand-in for the `electron`
 * module (no Electron binary on these machines): the stand-in records the
 * tray's menus, windows, notifications and IPC handlers, and main.ts drives
 * the real proxy (bin/dotstub.js, needs `npm run build:proxy`) under the
 * real supervisor. The proxy offers the system-DNS takeover on a copy of
 * the system files (--system-dns-root): this machine's DNS is never touched.
 *
 * Toggle → control API → the copy of resolv.conf, the tray's state and a
 * notification; a hung proxy (SIGSTOP) is caught by its liveness watchdog,
 * and private DNS comes back by itself once it answers again; quit gives
 * the old file back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { skipWith } from '../test-support/skips.js';
import { invoke, rec, standInApp, type MenuItem } from '../test-support/electron-stand-in.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const here = path.dirname(fileURLToPath(import.meta.url));
const built = fs.existsSync(path.join(here, '..', 'dist', 'proxy', 'cli.js'));

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\n';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-main-test-'));
afterAll(async () => {
  // Whatever happened, the app quits (stopping its proxy) before the files go.
  if (!rec.exited) standInApp.quit();
  await until(() => rec.exited, 10_000).catch(() => undefined);
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function until<T>(get: () => T | undefined | false, ms = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${ms} ms; last menu: ${JSON.stringify(rec.menus.at(-1)?.slice(0, 4))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lastMenu = (): MenuItem[] => rec.menus.at(-1) ?? [];
const item = (id: string): MenuItem | undefined => lastMenu().find((i) => i.id === id);

describe('app/main.ts against a stand-in electron', skipWith(built ? null : 'dist/proxy is not built (npm run build:proxy)'), () => {
  test('tray toggle → control API → system DNS on, tray checked, notification; IPC checks the sender; quit gives the old DNS back', async () => {
    const root = path.join(tmp, 'root');
    const cfg = path.join(tmp, 'config');
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
    fs.mkdirSync(cfg);
    const resolvConf = path.join(root, 'etc', 'resolv.conf');
    fs.writeFileSync(resolvConf, ORIGINAL);
    process.env.DOTSTUB_PROXY_ARGS = `--listen 127.0.0.1:0 --resolver 127.0.0.1:1#dns.test --config-dir ${cfg} --system-dns-root ${root} --system-dns-state-dir ${path.join(root, 'state')}`;

    await import('./main.js');

    // The first item is the toggle; once the proxy answers, it is usable and says why it is off.
    const toggle = await until(() => item('system-dns')?.enabled === true && item('system-dns'), 20_000, 'an enabled toggle');
    expect(lastMenu()[0]?.id).toBe('system-dns');
    expect(toggle).toMatchObject({ type: 'checkbox', label: 'Enable private DNS', checked: false });
    expect(item('system-dns-reason')?.label).toMatch(/^Off — private DNS is not enabled/);

    toggle.click?.();
    await until(() => rec.notifications.length > 0, 10_000, 'a notification');
    expect(rec.notifications[0]).toBe('Private DNS is on for this machine: every program now asks dotstub.');
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
    await until(() => item('system-dns')?.checked === true, 10_000, 'a checked toggle');
    expect(item('system-dns-reason')?.label).toMatch(/^On — /);

    // IPC: every handler checks its sender; only the dashboard's own origin gets an answer.
    expect([...rec.ipc.keys()].sort()).toEqual(['dotstub:get-info', 'dotstub:hide-window', 'dotstub:open-external']);
    // Open dashboard: a sandboxed window on the proxy's own origin.
    const open = item('open-dashboard');
    open?.click?.();
    const win = await until(() => rec.windows[0], 5000, 'a window');
    expect(win.webContents.getURL()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=/);
    expect(win.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    const origin = new URL(win.webContents.getURL()).origin;
    await expect(invoke('dotstub:get-info', win.webContents, 'https://evil.example/')).rejects.toThrow(/refused/);
    expect(await invoke('dotstub:get-info', win.webContents, `${origin}/`)).toMatchObject({ appVersion: '0.1.0' });

    // Toggle off: the old file back, and the notification says so.
    (item('system-dns') as MenuItem).click?.();
    await until(() => rec.notifications.length > 1, 10_000, 'a second notification');
    expect(rec.notifications[1]).toBe('Private DNS is off for this machine: your old DNS settings are back.');
    expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);

    // On again, then Quit from the tray: the proxy stops and gives the old DNS back first.
    (await until(() => item('system-dns')?.checked === false && item('system-dns'), 10_000, 'an unchecked toggle')).click?.();
    await until(() => rec.notifications.length > 2, 10_000, 'a third notification');
    expect(fs.readFileSync(resolvConf, 'utf8')).not.toBe(ORIGINAL);
    await until(() => item('system-dns')?.checked === true, 10_000, 'the tray to show it on again');

    // The proxy hangs (SIGSTOP): its liveness watchdog gives the old DNS back
    // within ~3 s, and once it runs again the tray says what happened.
    const journal = JSON.parse(fs.readFileSync(path.join(root, 'state', 'system-dns.journal.json'), 'utf8')) as { pid: number };
    process.kill(journal.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await until(() => fs.readFileSync(resolvConf, 'utf8') === ORIGINAL, 8000, 'the watchdog to restore');
      expect(Date.now() - stoppedAt).toBeLessThan(5000);
    } finally {
      process.kill(journal.pid, 'SIGCONT');
    }
    await until(() => item('system-dns')?.checked === false, 15_000, 'the tray to show the takeover gone');
    // Once it answers steadily again, private DNS comes back by itself (issue 20), and the tray follows.
    await until(() => item('system-dns')?.checked === true && fs.readFileSync(resolvConf, 'utf8') !== ORIGINAL, 15_000, 'private DNS back by itself');
    expect(item('system-dns-reason')?.label).toMatch(/^On — /);

    item('quit')?.click?.();
    await until(() => rec.exited, 15_000, 'the app to exit');
    expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
    expect(fs.existsSync(path.join(root, 'state', 'system-dns.journal.json'))).toBe(false);
  });
});

/**
 * Fixtures: each test gets its own lab (a real unbound DoT upstream, a
 * fresh config dir, the real proxy) and a signed-in dashboard page. Teardown
 * stops every process the test started, in reverse order.
 */
import { test as base, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { Dashboard } from './dashboard.js';
import { dig, digMany, digManyAsync, ProxyProcess, startUpstream, tempDir, type DigAnswer } from './lab.js';

export class Lab {
  #upstream: UnboundServer;
  readonly proxy: ProxyProcess;
  readonly #cleanup: (() => Promise<void>)[] = [];

  constructor(upstream: UnboundServer, proxy: ProxyProcess) {
    this.#upstream = upstream;
    this.proxy = proxy;
  }

  get upstream(): UnboundServer {
    return this.#upstream;
  }

  onCleanup(fn: () => Promise<void>): void {
    this.#cleanup.push(fn);
  }

  /** A second upstream whose which.test answers `tag`; stopped at teardown. */
  async secondUpstream(tag: string): Promise<UnboundServer> {
    const u = await startUpstream(tag);
    this.onCleanup(() => u.stop());
    return u;
  }

  dig(name: string, type = 'A', tcp = false): DigAnswer {
    return dig(this.proxy.dnsPort, name, type, tcp);
  }

  digMany(names: readonly string[], type = 'A'): string {
    return digMany(this.proxy.dnsPort, names, type);
  }

  digManyAsync(names: readonly string[], type = 'A'): Promise<string> {
    return digManyAsync(this.proxy.dnsPort, names, type);
  }

  /** Stops the upstream resolver (as if the network blocked it). */
  async stopUpstream(): Promise<void> {
    await this.#upstream.stop();
  }

  /** Starts the upstream again on the same port with the same zone. */
  async restartUpstream(): Promise<void> {
    this.#upstream = await startUnbound({ names: 50, extra: { 'which.test.': '10.0.0.1' }, port: this.#upstream.port });
  }

  /**
   * Restarts the proxy the way the desktop app starts it, with --system-dns,
   * on a copy of the system files in a temp root (this machine's DNS is never
   * touched; the root goes at teardown). Returns the root's resolv.conf.
   */
  async restartWithSystemDns(original = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\n'): Promise<string> {
    const root = tempDir('dotstub-e2e-root-');
    this.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
    fs.mkdirSync(path.join(root, 'etc'));
    const resolvConf = path.join(root, 'etc', 'resolv.conf');
    fs.writeFileSync(resolvConf, original);
    await this.proxy.stop();
    await this.proxy.start(this.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')]);
    return resolvConf;
  }

  async restartProxy(): Promise<void> {
    await this.proxy.stop();
    await this.proxy.start(this.upstream);
  }

  async close(): Promise<void> {
    for (const fn of this.#cleanup.reverse()) await fn().catch(() => {});
  }
}

export const test = base.extend<{ lab: Lab; dashboard: Dashboard; pageClock: boolean }>({
  /**
   * `test.use({ pageClock: true })`: Playwright's clock is installed before the dashboard loads, so every timer
   * the page sets is on it and a test can move the page's time (`page.clock.runFor`) instead of waiting.
   * It keeps real time until moved.
   */
  pageClock: [false, { option: true }],
  // eslint-disable-next-line no-empty-pattern
  lab: async ({}, use) => {
    const upstream = await startUpstream('10.0.0.1');
    const configDir = tempDir('dotstub-e2e-');
    const proxy = new ProxyProcess(configDir);
    const lab = new Lab(upstream, proxy);
    lab.onCleanup(() => lab.upstream.stop());
    lab.onCleanup(async () => fs.rmSync(configDir, { recursive: true, force: true }));
    lab.onCleanup(() => proxy.stop());
    try {
      await proxy.start(upstream);
      await use(lab);
    } finally {
      await lab.close();
    }
  },
  dashboard: async ({ page, lab, pageClock }, use) => {
    if (pageClock) await page.clock.install();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource|EventSource|ERR_CONNECTION_REFUSED/.test(m.text())) errors.push(m.text());
    });
    const d = new Dashboard(page);
    await d.open(lab.proxy.dashboardUrl);
    await use(d);
    expect(errors, 'no script errors or CSP violations in the page').toEqual([]);
  },
});

export { expect };

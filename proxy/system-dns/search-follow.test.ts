/**
 * While dotstub holds resolv.conf, short names keep working as links come
 * and go: the stub's search line follows resolvconf's per-link records (a
 * VPN's hook, wg-quick) and the search list of a resolv.conf another program
 * wrote (a VPN's hook that writes the file itself), and restore still gives
 * back the original bytes. Real files under a temp root, the real watch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished, expect, test } from 'vitest';
import { systemHost, type SystemHost } from './host.js';
import { Journal } from './journal.js';
import { RewriteWatch } from './rewrite-watch.js';
import { ResolvConfBackend } from './resolv-conf-backend.js';
import { renderStubResolvConf, parseResolvConf } from './resolv-conf.js';
import { detectBackend, enable, restore } from './takeover.js';

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lan\noptions timeout:1 attempts:1\n';

function tempRoot(): { host: SystemHost; state: string; resolv: string; records: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-search-'));
  onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc/resolv.conf'), ORIGINAL);
  const host: SystemHost = { ...systemHost(root), run: async (argv) => ({ code: 1, stdout: '', stderr: `unexpected run: ${argv.join(' ')}`, missing: true }) };
  return { host, state: path.join(root, 'state'), resolv: path.join(root, 'etc/resolv.conf'), records: path.join(root, 'run/resolvconf/interface') };
}

/** Resolves when `read()` returns true, checked on each of the file's changes and every 20 ms (at most `ms`). */
async function until(read: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (read()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return read();
}

const searchLine = (file: string): string | undefined => /^search .*$/m.exec(fs.readFileSync(file, 'utf8'))?.[0];

async function takeOver(t: ReturnType<typeof tempRoot>): Promise<{ events: string[] }> {
  const ctx = { host: t.host, stateDir: t.state };
  await enable(ctx, await detectBackend(t.host, 'resolv.conf'), { port: 53 }, process.pid);
  const events: string[] = [];
  const watch = new RewriteWatch({ host: t.host, stateDir: t.state, backend: new ResolvConfBackend(t.host), target: { port: 53 }, stepMs: 20, pollMs: 60_000, onEvent: (e) => events.push(e.type === 'search' ? `search ${e.domains.join(' ')}` : e.type) });
  watch.start();
  onTestFinished(async () => {
    watch.close();
    await restore(ctx);
  });
  return { events };
}

test('the stub keeps one search line: resolvconf records first (tunnels before the LAN), then the file’s own, without repeats', () => {
  expect(renderStubResolvConf(parseResolvConf(ORIGINAL), ['corp.example', 'lan'])).toBe(
    '# Managed by dotstub (private DNS).\n# Your original file is in the journal; `dotstub system-dns restore` puts it back.\nnameserver 127.0.0.1\nsearch corp.example lan\noptions timeout:1 attempts:1\noptions trust-ad\n',
  );
  // glibc reads the last search/domain line only: so does the stub.
  expect(searchLine(writeTemp(renderStubResolvConf(parseResolvConf('nameserver 10.0.0.1\nsearch a.example\ndomain b.example\n'))))).toBe('search b.example');
});

function writeTemp(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-search-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), text);
  return path.join(dir, 'resolv.conf');
}

test('a VPN registering with resolvconf adds its search domain to the stub within a second; leaving takes it out; the journal says what was written; restore gives back the original bytes', async () => {
  const t = tempRoot();
  const { events } = await takeOver(t);
  expect(searchLine(t.resolv)).toBe('search lan');

  fs.mkdirSync(t.records, { recursive: true });
  fs.writeFileSync(path.join(t.records, 'eth0.dhclient'), 'nameserver 10.99.0.1\nsearch lan\n');
  fs.writeFileSync(path.join(t.records, 'tun0'), 'nameserver 10.98.0.1\nsearch corp.example\n');
  expect(await until(() => searchLine(t.resolv) === 'search corp.example lan')).toBe(true);
  expect(fs.readFileSync(t.resolv, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
  expect(fs.readFileSync(t.resolv, 'utf8').match(/^nameserver/gm)).toHaveLength(1);
  const journal = new Journal(t.state).read();
  const step = journal?.steps.find((e) => e.step.kind === 'file')?.step;
  expect(step?.kind === 'file' && Buffer.from(step.after.type === 'file' ? step.after.base64 : '', 'base64').toString()).toContain('search corp.example lan');
  expect(events).toContain('search corp.example lan');
  expect(events.filter((e) => e === 'reapplied')).toEqual([]); // following the search list is not a fight

  fs.rmSync(path.join(t.records, 'tun0'));
  expect(await until(() => searchLine(t.resolv) === 'search lan')).toBe(true);

  await restore({ host: t.host, stateDir: t.state });
  expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
});

test('a VPN hook that writes resolv.conf itself: dotstub is put back with the hook’s search list; its down hook’s file brings the old list back; restore gives back the original bytes', async () => {
  const t = tempRoot();
  await takeOver(t);
  const replace = (text: string): void => {
    fs.writeFileSync(`${t.resolv}.hook`, text);
    fs.renameSync(`${t.resolv}.hook`, t.resolv);
  };
  replace('nameserver 10.98.0.1\nnameserver 10.99.0.1\nsearch corp.example lan\n');
  expect(await until(() => searchLine(t.resolv) === 'search corp.example lan' && /^nameserver 127\.0\.0\.1$/m.test(fs.readFileSync(t.resolv, 'utf8')))).toBe(true);
  expect(fs.readFileSync(t.resolv, 'utf8').match(/^nameserver/gm)).toHaveLength(1);

  replace(ORIGINAL);
  expect(await until(() => searchLine(t.resolv) === 'search lan' && fs.readFileSync(t.resolv, 'utf8').includes('Managed by dotstub'))).toBe(true);

  await restore({ host: t.host, stateDir: t.state });
  expect(fs.readFileSync(t.resolv, 'utf8')).toBe(ORIGINAL);
});

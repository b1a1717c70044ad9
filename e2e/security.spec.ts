/**
 * In real Chromium: a page served from another origin on loopback (another
 * port, so the same *site*: the SameSite=Strict cookie is sent) tries to
 * switch the user's resolver with fetch and with a form post while the user
 * is logged in to the dashboard. Every attempt fails and the resolver stays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';

interface Ready {
  dns: { host: string; port: number }[];
  control: string;
  token: string;
  pid: number;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let unbound: UnboundServer;
let child: ChildProcess | undefined;
let ready: Ready;
let attacker: http.Server | undefined;
let attackerUrl: string;
let targetId: string;
let originalId: string;

/** API call as a script does it: token header, our Origin on changes. */
async function api(method: string, p: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${ready.control}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${ready.token}`,
      ...(method === 'GET' ? {} : { origin: ready.control }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}

async function activeResolver(): Promise<string> {
  const r = await api('GET', '/api/resolvers');
  return (r.json as { active: string }).active;
}

function attackerPage(control: string, id: string): string {
  const body = JSON.stringify({ id });
  // Inline script is fine here: this is the attacker's page, not ours.
  return `<!doctype html><meta charset="utf-8"><title>cute cats</title>
<form id="f" method="POST" action="${control}/api/resolvers/active" enctype="text/plain">
  <input name='{"id":"${id}","x":"' value='"}'>
</form>
<form id="g" method="POST" action="${control}/api/settings" enctype="application/x-www-form-urlencoded">
  <input name="padding" value="false">
</form>
<script>
window.attacks = (async () => {
  const out = {};
  const attempt = async (name, url, init) => {
    try {
      const r = await fetch(url, init);
      out[name] = 'status ' + r.status + ' type ' + r.type;
    } catch (e) {
      out[name] = 'blocked: ' + e.name;
    }
  };
  // CORS request with credentials: the preflight must fail.
  await attempt('fetch PUT json', '${control}/api/resolvers/active', {
    method: 'PUT', credentials: 'include', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(body)},
  });
  // "Simple" requests that skip the preflight; the cookie is sent (same site), the Origin is ours to check.
  await attempt('fetch no-cors POST text', '${control}/api/resolvers/active', {
    method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)},
  });
  await attempt('fetch no-cors POST add resolver', '${control}/api/resolvers', {
    method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ address: '127.0.0.77', authName: 'dns.test' }),
  });
  // Reading the API cross-origin must fail too.
  await attempt('fetch cors GET status', '${control}/api/status', { credentials: 'include' });
  return out;
})();
</script>`;
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  unbound = await startUnbound({ names: 10 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-e2e-sec-'));
  const readyFile = path.join(dir, 'ready.json');
  child = spawn(
    process.execPath,
    [
      '--import', 'tsx', '-e',
      "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })",
      '--',
      '--resolver', unbound.resolverArg, '--ca', unbound.pki.caFile,
      '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0',
      '--config-dir', path.join(dir, 'config'), '--ready-file', readyFile,
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dotstub did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as Ready;
  originalId = await activeResolver();
  // The resolver the attacker wants the user on (a loopback address: nothing leaves the machine even if it worked).
  const added = await api('POST', '/api/resolvers', { label: 'attacker', address: '127.0.0.66', authName: 'dns.test' });
  expect(added.status).toBe(201);
  targetId = (added.json as { id: string }).id;

  attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(attackerPage(ready.control, targetId));
  });
  await new Promise<void>((r) => attacker?.listen(0, '127.0.0.1', r));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  if (attacker) await new Promise<void>((r) => attacker?.close(() => r()));
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child?.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await unbound?.stop();
});

test('the dashboard origin itself works with the session cookie (control)', async ({ page }) => {
  await page.goto(`${ready.control}/?token=${ready.token}`);
  expect(new URL(page.url()).search).toBe('');
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'dotstub_session');
  expect(session?.httpOnly).toBe(true);
  expect(session?.sameSite).toBe('Strict');
  const status = await page.evaluate(async () => (await fetch('/api/status')).status);
  expect(status).toBe(200);
  // Page scripts never see the token or the cookie.
  expect(await page.evaluate('document.cookie')).toBe('');
});

test('another loopback origin cannot switch the resolver with fetch or a form post', async ({ page }) => {
  // The user is logged in to the dashboard in this browser…
  await page.goto(`${ready.control}/?token=${ready.token}`);
  // …and opens the attacker's page (another port on 127.0.0.1: same site, so the cookie goes along).
  await page.goto(attackerUrl);
  const results = (await page.evaluate('window.attacks')) as Record<string, string>;
  expect(results['fetch PUT json']).toMatch(/^blocked/);
  // no-cors requests reach the server; the page gets an opaque answer or, with our
  // Cross-Origin-Resource-Policy, a network error. Whether the server refused them is checked below.
  expect(results['fetch no-cors POST text']).toMatch(/^(blocked: TypeError|status 0 type opaque)$/);
  expect(results['fetch cors GET status']).toMatch(/^blocked/);
  expect(await activeResolver()).toBe(originalId);

  // Form posts navigate: the answer is our 403 for the foreign Origin (not 401: the cookie was sent).
  const [formResponse] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/resolvers/active')), page.evaluate("document.getElementById('f').submit()")]);
  expect(formResponse.status()).toBe(403);
  expect(((await formResponse.json()) as { error: { code: string } }).error.code).toBe('forbidden_origin');

  await page.goto(attackerUrl);
  const [settingsResponse] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/settings')), page.evaluate("document.getElementById('g').submit()")]);
  expect(settingsResponse.status()).toBe(403);

  // Nothing changed.
  expect(await activeResolver()).toBe(originalId);
  const resolvers = (await api('GET', '/api/resolvers')).json as { resolvers: { id: string }[] };
  expect(resolvers.resolvers.map((r) => r.id)).not.toContain('custom:127.0.0.77:853');
  const settings = (await api('GET', '/api/settings')).json as { padding: boolean };
  expect(settings.padding).toBe(true);
});

/**
 * In real Chromium, against the real proxy:
 * - the dashboard signs in from the link's fragment and leaves no ambient
 *   credential: no cookie, nothing another server on 127.0.0.1 receives
 *   when the same browser visits it (issue 13);
 * - a page served from another origin on loopback (another port: the same
 *   *site*) tries to switch the user's resolver with fetch and with a form
 *   post while the user has the dashboard open. Every attempt fails and the
 *   resolver stays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
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
  dashboard: string;
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
  // "Simple" requests that skip the preflight: they reach the server, which checks the Origin (and finds no credential).
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
  if (attacker) {
    const closed = new Promise<void>((r) => attacker?.close(() => r()));
    attacker.closeAllConnections();
    await closed;
  }
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child?.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await unbound?.stop();
});

/** A plain server on another loopback port that records every request it gets, as a local dev server or a malicious local app would. */
async function startRecorder(): Promise<{ url: string; seen: { url: string; headers: http.IncomingHttpHeaders }[]; close(): Promise<void> }> {
  const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    // The page asks its own server again (credentials: 'include') and loads an image from it, the ways a page gets cookies sent.
    res.end(`<!doctype html><title>local dev server</title><img src="/pixel.png"><script>fetch('/probe', { credentials: 'include' });</script>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      // The browser keeps connections alive; close() alone would wait for them.
      server.closeAllConnections();
      return closed;
    },
  };
}

/** Waits until the dashboard page says it is live (signed in, stream open). */
async function signedIn(page: import('@playwright/test').Page): Promise<void> {
  await expect(page.getByRole('banner').getByRole('status')).toHaveText('Live');
  await expect(page.getByRole('region', { name: 'Privacy status' })).toContainText('Your DNS is private');
}

test('the dashboard signs in from the link fragment: token only in a header, gone from the address bar, no cookie', async ({ page }) => {
  const requests: { url: string; auth: string | undefined }[] = [];
  page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers().authorization }));
  expect(ready.dashboard).toBe(`${ready.control}/#token=${ready.token}`);
  await page.goto(ready.dashboard);
  await signedIn(page);
  expect(page.url()).not.toContain(ready.token);
  expect(new URL(page.url()).hash).toBe('#/');
  expect(await page.context().cookies()).toEqual([]);
  expect(await page.evaluate('document.cookie')).toBe('');
  // Every API call (the stream included) carried the header; no URL ever carried the token.
  const apiCalls = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
  expect(apiCalls.map((r) => new URL(r.url).pathname)).toContain('/api/stream');
  for (const r of apiCalls) expect(r.auth, r.url).toBe(`Bearer ${ready.token}`);
  for (const r of requests) expect(r.url).not.toContain(ready.token);
  // Without the header the same page gets nothing: there is no other credential.
  expect(await page.evaluate(async () => (await fetch('/api/status')).status)).toBe(401);
  // A reload keeps the tab signed in (sessionStorage), still with no cookie.
  await page.reload();
  await signedIn(page);
  expect(await page.context().cookies()).toEqual([]);
});

test('after the dashboard signed in, another server on loopback receives no cookie, no token, nothing replayable (issue 13)', async ({ page, context }) => {
  const recorder = await startRecorder();
  try {
    await page.goto(ready.dashboard);
    await signedIn(page);
    // The same browser then visits another local server: in this tab and in another.
    await page.goto(`${recorder.url}/`);
    await expect.poll(() => recorder.seen.some((r) => r.url === '/probe')).toBe(true);
    const other = await context.newPage();
    await other.goto(`${recorder.url}/second`);
    // And by the name localhost, which is a different host for cookies but the same machine.
    await other.goto(`${recorder.url.replace('127.0.0.1', 'localhost')}/third`);
    await expect.poll(() => recorder.seen.filter((r) => r.url === '/probe').length).toBeGreaterThanOrEqual(3);
    await other.close();

    expect(recorder.seen.length).toBeGreaterThanOrEqual(6);
    const oldSession = crypto.createHmac('sha256', ready.token).update('dotstub dashboard session v1').digest('base64url');
    for (const r of recorder.seen) {
      expect(r.headers.cookie, r.url).toBeUndefined();
      expect(r.headers.authorization, r.url).toBeUndefined();
      const everything = JSON.stringify(r);
      expect(everything).not.toContain(ready.token);
      expect(everything).not.toContain(oldSession);
    }
    // Replayed against the control API exactly as received (curl can forge Origin): refused.
    for (const r of recorder.seen) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
      const res = await fetch(`${ready.control}/api/status`, { headers: { ...headers, origin: ready.control } });
      // 401 (no credential) or 403 (a Sec-Fetch-Site the API refuses anyway); never the status.
      expect([401, 403], r.url).toContain(res.status);
    }
    expect(await context.cookies()).toEqual([]);
  } finally {
    await recorder.close();
  }
});

test('the old link form /?token= still signs in, through the fragment, and sets nothing', async ({ page }) => {
  const responses: { url: string; setCookie: string | null }[] = [];
  page.on('response', (r) => responses.push({ url: r.url(), setCookie: r.headers()['set-cookie'] ?? null }));
  await page.goto(`${ready.control}/?token=${ready.token}`);
  await signedIn(page);
  expect(page.url()).toBe(`${ready.control}/#/`);
  expect(responses.length).toBeGreaterThan(0);
  for (const r of responses) expect(r.setCookie, r.url).toBeNull();
  expect(await page.context().cookies()).toEqual([]);
});

test('another loopback origin cannot switch the resolver with fetch or a form post', async ({ page }) => {
  // The user has the dashboard open in this browser…
  await page.goto(ready.dashboard);
  await signedIn(page);
  // …and opens the attacker's page (another port on 127.0.0.1: the same site).
  await page.goto(attackerUrl);
  const results = (await page.evaluate('window.attacks')) as Record<string, string>;
  expect(results['fetch PUT json']).toMatch(/^blocked/);
  // no-cors requests reach the server; the page gets an opaque answer or, with our
  // Cross-Origin-Resource-Policy, a network error. Whether the server refused them is checked below.
  expect(results['fetch no-cors POST text']).toMatch(/^(blocked: TypeError|status 0 type opaque)$/);
  expect(results['fetch cors GET status']).toMatch(/^blocked/);
  expect(await activeResolver()).toBe(originalId);

  // Form posts navigate: the answer is our 403 for the foreign Origin (checked before the token, which they can't have).
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

/**
 * Attacks on the control API, each refused, and nothing changed by any of
 * them. Real HTTP server on port 0; raw requests so Host and Origin are
 * exactly what an attacker would send.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiClient, rawRequest, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import type { ApiError, ResolverView, Settings, StatusView } from './api-types.js';

let h: ControlHarness;
let api: ReturnType<typeof apiClient>;
let dashboard: string;
let targetId: string;
let settingsBefore: Settings;
let port: number;

beforeAll(async () => {
  dashboard = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-dash-'));
  fs.mkdirSync(path.join(dashboard, 'assets'));
  fs.writeFileSync(path.join(dashboard, 'index.html'), '<!doctype html><title>dash</title><script type="module" src="/assets/app-1.js"></script>');
  fs.writeFileSync(path.join(dashboard, 'assets', 'app-1.js'), 'console.log(1)');
  fs.writeFileSync(path.join(dashboard, 'assets', 'app-1.css'), 'body{}');
  // A closed loopback port as the upstream: these tests never need an answer.
  h = await startControl({ resolverArg: '127.0.0.1:9#dns.test', dashboardDir: dashboard });
  port = h.server.port;
  api = apiClient(h);
  const added = await api.post('/api/resolvers', { address: '127.0.0.2', port: 853, authName: 'dns.test' });
  expect(added.status).toBe(201);
  targetId = added.json<ResolverView>().id;
  settingsBefore = (await api.get('/api/settings')).json<Settings>();
});
afterAll(async () => {
  await h?.stop();
  fs.rmSync(dashboard, { recursive: true, force: true });
});

function code(r: { json<T>(): T }): string {
  return r.json<ApiError>().error.code;
}

const auth = (): Record<string, string> => ({ authorization: `Bearer ${h.token}` });

/** Nothing an attack tried took effect: resolver, settings, files. */
async function assertUnchanged(): Promise<void> {
  expect(h.proxy.resolver.id).toBe('custom:127.0.0.1:9');
  const s = (await api.get('/api/status')).json<StatusView>();
  expect(s.resolver.id).toBe('custom:127.0.0.1:9');
  expect((await api.get('/api/settings')).json<Settings>()).toEqual(settingsBefore);
  expect(fs.existsSync(path.join(h.configDir, 'settings.json'))).toBe(false);
}

describe('token', () => {
  test('no token → 401 on every API path, the stream included', async () => {
    for (const p of ['/api/status', '/api/resolvers', '/api/settings', '/api/queries', '/api/queries/export?format=csv', '/api/stream', '/api/nope']) {
      const r = await rawRequest(h.url, p);
      expect(r.status, p).toBe(401);
      expect(code(r)).toBe('unauthorized');
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  test('wrong token → 401 (header, cookie, malformed header)', async () => {
    const wrong: Record<string, string>[] = [
      { authorization: 'Bearer nope' },
      { authorization: `Bearer ${h.token}x` },
      { authorization: `Basic ${h.token}` },
      { cookie: 'dotstub_session=forged' },
      { cookie: `dotstub_session=${h.token}` },
    ];
    for (const headers of wrong) {
      const r = await rawRequest(h.url, '/api/status', { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
    }
    const put = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: { authorization: 'Bearer nope', origin: h.origin }, body: { id: targetId } });
    expect(put.status).toBe(401);
    await assertUnchanged();
  });

  test('no response sets a cookie: the page, the dashboard link in either form, the API, the stream, errors', async () => {
    const responses = [
      await rawRequest(h.url, '/'),
      await rawRequest(h.url, '/assets/app-1.js'),
      await rawRequest(h.url, `/?token=${h.token}`),
      await rawRequest(h.url, '/?token=wrong'),
      await rawRequest(h.url, '/api/status'),
      await rawRequest(h.url, '/api/status', { headers: auth() }),
      await rawRequest(h.url, '/api/settings', { method: 'PUT', headers: { ...auth(), origin: h.origin }, body: {} }),
      await rawRequest(h.url, '/api/nope', { headers: auth() }),
      await rawRequest(h.url, '/api/status', { headers: { host: `evil.example:${port}` } }),
    ];
    for (const r of responses) expect(r.headers['set-cookie'], `${r.status} ${r.text.slice(0, 60)}`).toBeUndefined();
    const stream = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/api/stream', headers: auth(), agent: false }, (res) => {
        resolve(res.headers);
        res.destroy();
      });
      req.on('error', reject);
    });
    expect(stream['content-type']).toMatch(/^text\/event-stream/);
    expect(stream['set-cookie']).toBeUndefined();
  });

  test('the old link form moves a valid token into the fragment (nothing set); a wrong one gets 401', async () => {
    const r = await rawRequest(h.url, `/?token=${h.token}`);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe(`/#token=${h.token}`);
    expect(r.headers['cache-control']).toBe('no-store');
    const bad = await rawRequest(h.url, '/?token=wrong');
    expect(bad.status).toBe(401);
    expect(bad.text).toContain('wrong token');
    expect(bad.headers.location).toBeUndefined();
    expect(h.server.dashboardUrl).toBe(`${h.url}/#token=${h.token}`);
  });

  test('a request carrying only the old session cookie is refused and changes nothing (issue 13)', async () => {
    // The exact value the pre-issue-13 server set for this token: a browser
    // that signed in before the upgrade still holds it.
    const old = crypto.createHmac('sha256', h.token).update('dotstub dashboard session v1').digest('base64url');
    const cookie = `dotstub_session=${old}`;
    for (const p of ['/api/status', '/api/queries', '/api/queries/export?format=csv', '/api/stream']) {
      const r = await rawRequest(h.url, p, { headers: { cookie } });
      expect(r.status, p).toBe(401);
      expect(code(r)).toBe('unauthorized');
    }
    // Replayed with a forged Origin, as curl can: still no.
    const put = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: { cookie, origin: h.origin }, body: { id: targetId } });
    expect(put.status).toBe(401);
    const settings = await rawRequest(h.url, '/api/settings', { method: 'PUT', headers: { cookie, origin: h.origin }, body: { padding: false } });
    expect(settings.status).toBe(401);
    await assertUnchanged();
  });

  test('the token file is owner-only', () => {
    expect(fs.statSync(path.join(h.configDir, 'token')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(h.configDir, 'token'), 'utf8').trim()).toBe(h.token);
  });
});

describe('origin (CSRF)', () => {
  test('a foreign Origin on a state change → 403, even with a valid token, and nothing changes', async () => {
    const foreign = [`http://127.0.0.1:${port + 1}`, 'http://evil.example', 'null', `http://localhost:${port + 1}`, `https://127.0.0.1:${port}`];
    for (const origin of foreign) {
      const r = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: { ...auth(), origin }, body: { id: targetId } });
      expect(r.status, origin).toBe(403);
      expect(code(r)).toBe('forbidden_origin');
      const s = await rawRequest(h.url, '/api/settings', { method: 'PUT', headers: { ...auth(), origin }, body: { padding: false } });
      expect(s.status, origin).toBe(403);
    }
    await assertUnchanged();
  });

  test('a state change without any Origin → 403 (scripts add our Origin)', async () => {
    const r = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: auth(), body: { id: targetId } });
    expect(r.status).toBe(403);
    expect(r.json<ApiError>().error.message).toContain(`Origin: ${h.origin}`);
    const d = await rawRequest(h.url, `/api/resolvers/${encodeURIComponent(targetId)}`, { method: 'DELETE', headers: auth() });
    expect(d.status).toBe(403);
    await assertUnchanged();
  });

  test('cross-origin reads are refused too (Origin or Sec-Fetch-Site), and preflights get no CORS grant', async () => {
    const r1 = await rawRequest(h.url, '/api/status', { headers: { ...auth(), origin: 'http://evil.example' } });
    expect(r1.status).toBe(403);
    const r2 = await rawRequest(h.url, '/api/status', { headers: { ...auth(), 'sec-fetch-site': 'same-site' } });
    expect(r2.status).toBe(403);
    const pre = await rawRequest(h.url, '/api/resolvers/active', {
      method: 'OPTIONS',
      headers: { origin: `http://127.0.0.1:${port + 1}`, 'access-control-request-method': 'PUT' },
    });
    expect(pre.status).toBe(403);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    // Our own origin works, from each loopback name.
    const ok = await rawRequest(h.url, '/api/status', { headers: { ...auth(), origin: h.origin, 'sec-fetch-site': 'same-origin' } });
    expect(ok.status).toBe(200);
    const viaLocalhost = await rawRequest(`http://localhost:${port}`, '/api/status', { headers: { ...auth(), host: `localhost:${port}`, origin: `http://localhost:${port}` } });
    expect(viaLocalhost.status).toBe(200);
  });
});

describe('host (DNS rebinding)', () => {
  test('Host evil.example or attacker.localtest.me → rejected, on the API and the page', async () => {
    const hosts = [`evil.example:${port}`, `attacker.localtest.me:${port}`, 'evil.example', `127.0.0.1:${port + 1}`, `127.0.0.1.nip.io:${port}`, `localhost.:${port}`];
    for (const host of hosts) {
      for (const p of ['/api/status', '/', `/?token=${h.token}`]) {
        const r = await rawRequest(h.url, p, { headers: { ...auth(), host, origin: `http://${host}` } });
        expect(r.status, `${host} ${p}`).toBe(403);
        expect(code(r), `${host} ${p}`).toBe('bad_host');
      }
      const put = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: { ...auth(), host, origin: `http://${host}` }, body: { id: targetId } });
      expect(put.status).toBe(403);
    }
    // No Host at all (HTTP/1.0 over a raw socket).
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(`GET /api/status HTTP/1.0\r\nAuthorization: Bearer ${h.token}\r\n\r\n`));
      let data = '';
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => (data += d));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.[01] (400|403)/);
    await assertUnchanged();
  });
});

describe('bodies', () => {
  test('an oversized body → 413 and nothing changed (declared length and chunked)', async () => {
    // Valid JSON and a valid change, only too big: the cap alone refuses it.
    const big = `{"padding": false${' '.repeat(70 * 1024)}}`;
    const r = await rawRequest(h.url, '/api/settings', { method: 'PUT', headers: { ...auth(), origin: h.origin, 'content-type': 'application/json' }, body: big });
    expect(r.status).toBe(413);
    expect(code(r)).toBe('too_large');
    // Chunked: no Content-Length, the server counts.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path: '/api/settings', method: 'PUT', agent: false, headers: { ...auth(), origin: h.origin, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"padding": false');
      for (let i = 0; i < 10; i++) req.write(' '.repeat(8 * 1024));
      req.end('}');
    });
    expect(chunked).toBe(413);
    await assertUnchanged();
  });

  test('malformed JSON → 400; wrong content type → 415; nothing changed', async () => {
    for (const body of ['{"padding": false', 'padding=false', '', '[1,2', '{"id": }']) {
      const r = await rawRequest(h.url, '/api/settings', { method: 'PUT', headers: { ...auth(), origin: h.origin, 'content-type': 'application/json' }, body });
      expect(r.status, body).toBe(400);
      expect(code(r)).toBe('bad_request');
    }
    const notJson = await rawRequest(h.url, '/api/resolvers/active', { method: 'PUT', headers: { ...auth(), origin: h.origin, 'content-type': 'text/plain' }, body: JSON.stringify({ id: targetId }) });
    expect(notJson.status).toBe(415);
    const wrongShape = await api.put('/api/resolvers/active', ['quad9']);
    expect(wrongShape.status).toBe(400);
    expect(code(wrongShape)).toBe('validation');
    const arr = await api.put('/api/settings', [1]);
    expect(arr.status).toBe(400);
    await assertUnchanged();
  });

  test('unknown paths and methods', async () => {
    expect((await api.get('/api/nope')).status).toBe(404);
    expect((await api.post('/api/status', {})).status).toBe(405);
    expect((await rawRequest(h.url, '/', { method: 'POST', body: {} })).status).toBe(405);
  });
});

describe('the dashboard files', () => {
  test('index.html with a strict CSP, assets with their types, SPA fallback, no traversal', async () => {
    const root = await rawRequest(h.url, '/');
    expect(root.status).toBe(200);
    expect(root.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = root.headers['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(root.headers['x-content-type-options']).toBe('nosniff');
    expect(root.headers['referrer-policy']).toBe('no-referrer');
    const js = await rawRequest(h.url, '/assets/app-1.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toMatch(/immutable/);
    expect((await rawRequest(h.url, '/assets/app-1.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    const deep = await rawRequest(h.url, '/queries/some/view');
    expect(deep.status).toBe(200);
    expect(deep.text).toContain('<title>dash</title>');
    expect((await rawRequest(h.url, '/assets/missing.js')).status).toBe(404);
    for (const p of ['/../package.json', '/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json', '/..%5cpackage.json']) {
      const r = await rawRequest(h.url, p);
      expect(r.text, p).not.toContain('"name": "dotstub"');
    }
  });

  test('without a built dashboard, a page says to run npm run build', async () => {
    const other = await startControl({ resolverArg: '127.0.0.1:9#dns.test', dashboardDir: path.join(dashboard, 'missing') });
    try {
      const r = await rawRequest(other.url, '/');
      expect(r.status).toBe(200);
      expect(r.text).toContain('npm run build');
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    } finally {
      await other.stop();
    }
  });
});

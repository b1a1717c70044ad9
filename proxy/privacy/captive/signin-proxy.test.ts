/**
 * The sign-in proxy as a portal page would use it, on real sockets: the
 * network's resolver is the lab's (test-support/fake-portal.ts's hotspot
 * DNS, every name at 127.0.0.1), and a loopback HTTP service that doesn't
 * check Host stands for whatever this machine serves on loopback. A page
 * of the network must reach nothing of it: not by a name the network points
 * at 127.0.0.1, not by 0.0.0.0 or a literal, not through a tunnel, and not
 * by re-pointing a name once the proxy has used it (DNS rebinding).
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startHotspotDns } from '../../../test-support/fake-portal.js';
import { whyOffLimits } from '../../network/off-limits.js';
import { CleartextUpstream } from '../../upstream/plain/cleartext.js';
import { lookupThrough } from './lookup.js';
import { SignInProxy, type SignInProxyInfo, type SignInProxyOptions } from './signin-proxy.js';

/** An HTTP service on `host` (port 0: any) that answers every request with `body`; the requests it saw. */
async function service(host: string, body: string, port = 0): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.headers.host ?? ''}${req.url ?? ''}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, seen };
}

async function signInProxy(opts: SignInProxyOptions): Promise<SignInProxyInfo> {
  const proxy = new SignInProxy({ connectTimeoutMs: 1000, ...opts });
  onTestFinished(() => proxy.close());
  return proxy.listen();
}

function auth(info: SignInProxyInfo): string {
  return `Basic ${Buffer.from(`${info.username}:${info.password}`).toString('base64')}`;
}

/** A plain-HTTP GET of `url` through the proxy, as Chromium sends it. */
function get(info: SignInProxyInfo, url: string): Promise<{ status: number; body: string }> {
  const proxy = new URL(info.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: proxy.hostname, port: Number(proxy.port), method: 'GET', path: url, headers: { host: new URL(url).host, 'proxy-authorization': auth(info) }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** CONNECT `target` through the proxy; what it answered (status line and body), once it ends the connection. */
function connect(info: SignInProxyInfo, target: string): Promise<string> {
  const proxy = new URL(info.url);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: proxy.hostname, port: Number(proxy.port) });
    let text = '';
    s.on('data', (c: Buffer) => {
      text += c.toString();
      // A tunnel that opened: nothing more comes until the page speaks.
      if (text.startsWith('HTTP/1.1 200')) s.destroy();
    });
    s.on('close', () => resolve(text));
    s.on('error', reject);
    s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: ${auth(info)}\r\n\r\n`);
  });
}

describe('the sign-in proxy reaches the network, never this machine', () => {
  test('a name the network points at 127.0.0.1, 0.0.0.0, a loopback literal in any spelling, the metadata address: refused in words, the loopback service never asked', async () => {
    const dns = await startHotspotDns();
    onTestFinished(() => dns.stop());
    const local = await service('127.0.0.1', 'a loopback-only secret');
    const cleartext = new CleartextUpstream({ servers: [{ host: '127.0.0.1', port: dns.port }] });
    onTestFinished(() => cleartext.destroy());
    const info = await signInProxy({ lookup: lookupThrough(cleartext) });

    const byName = await get(info, `http://x.evil.test:${local.port}/`);
    expect(byName.status).toBe(403);
    expect(byName.body).toContain('refused x.evil.test: 127.0.0.1 is this machine (loopback)');
    // It was asked at the network's resolver, as every sign-in name is; the answer is what was refused.
    expect(dns.asked).toContain('x.evil.test a');

    const literals: [string, string][] = [
      [`http://0.0.0.0:${local.port}/`, '0.0.0.0 is the unspecified address'],
      [`http://127.0.0.1:${local.port}/`, '127.0.0.1 is this machine (loopback)'],
      [`http://2130706433:${local.port}/`, '127.0.0.1 is this machine (loopback)'],
      [`http://127.1.2.3:${local.port}/`, '127.1.2.3 is this machine (loopback)'],
      [`http://[::ffff:127.0.0.1]:${local.port}/`, 'is this machine (loopback)'],
      [`http://[::1]:${local.port}/`, '::1 is this machine (loopback)'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is the cloud metadata service'],
      ['http://169.254.1.1/', 'link-local'],
      ['http://224.0.0.251/', 'multicast'],
      ['http://255.255.255.255/', 'broadcast'],
    ];
    for (const [url, why] of literals) {
      const r = await get(info, url);
      expect([r.status, r.body], url).toEqual([403, expect.stringContaining(why)]);
    }
    expect(local.seen).toEqual([]);
  });

  test('CONNECT goes to port 443 only, and never to this machine', async () => {
    const dns = await startHotspotDns();
    onTestFinished(() => dns.stop());
    const local = await service('127.0.0.1', 'a loopback-only secret');
    const cleartext = new CleartextUpstream({ servers: [{ host: '127.0.0.1', port: dns.port }] });
    onTestFinished(() => cleartext.destroy());
    const info = await signInProxy({ lookup: lookupThrough(cleartext) });

    // Any port but 443: refused before anything is looked up or connected, loopback or not.
    for (const target of [`127.0.0.1:${local.port}`, `x.evil.test:${local.port}`, '192.0.2.1:22']) {
      const answer = await connect(info, target);
      expect(answer, target).toMatch(/^HTTP\/1\.1 403 /);
      expect(answer, target).toContain('tunnels go to port 443 (HTTPS) only');
    }
    expect(dns.asked).toEqual([]);
    const named = await connect(info, 'x.evil.test:443');
    expect(named).toMatch(/^HTTP\/1\.1 403 /);
    expect(named).toContain('127.0.0.1 is this machine (loopback)');
    for (const target of ['127.0.0.1:443', '[::1]:443', '0.0.0.0:443', '169.254.169.254:443']) expect(await connect(info, target), target).toMatch(/^HTTP\/1\.1 403 /);
    expect(local.seen).toEqual([]);
  });

  test("a name's first answer holds for the sign-in: the network can't re-point it at 127.0.0.1 (DNS rebinding)", async () => {
    // The portal stands at 127.0.0.2, let through here as if it were the network's; the secret at 127.0.0.1, same port.
    const local = await service('127.0.0.1', 'a loopback-only secret');
    const portal = await service('127.0.0.2', 'the portal', local.port);
    const answers = [['127.0.0.2'], ['127.0.0.1']];
    let asked = 0;
    const info = await signInProxy({
      lookup: () => Promise.resolve(answers[Math.min(asked++, answers.length - 1)] ?? []),
      offLimits: (a) => (a === '127.0.0.2' ? null : whyOffLimits(a)),
    });

    const first = await get(info, `http://x.evil.test:${local.port}/`);
    expect(first).toEqual({ status: 200, body: 'the portal' });
    // The page now asks again, same origin, after the network's resolver changed its answer to 127.0.0.1.
    for (let i = 0; i < 3; i++) expect(await get(info, `http://x.evil.test:${local.port}/secret`)).toEqual({ status: 200, body: 'the portal' });
    expect(asked).toBe(1);
    expect(portal.seen).toHaveLength(4);
    expect(local.seen).toEqual([]);

    // A fresh sign-in (a new proxy) asks again, and the new answer is checked like any other.
    const next = await signInProxy({ lookup: () => Promise.resolve(['127.0.0.1']) });
    expect((await get(next, `http://x.evil.test:${local.port}/`)).status).toBe(403);
    expect(local.seen).toEqual([]);
  });
});

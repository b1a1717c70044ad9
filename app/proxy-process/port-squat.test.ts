/**
 * Another local program holds the dashboard's port before dotstub starts
 * (issue 43, item 4): a "squatter" listens on 127.0.0.1:5380 (or, when this
 * machine's 5380 is taken already, another port dotstub is told is its
 * default) and records every request it receives. dotstub, started as the
 * service starts it (the default port, a control socket), must not move
 * the browser API to another port unless asked, must say so in words, and
 * no client may hand the token to the squatter: `dotstub ctl dashboard`,
 * the desktop app's connection to the service (service-connection.ts),
 * `dotstub leak-test` with its defaults. The squatter's log is checked for
 * the token in every request line, header and body.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startControl } from '../../test-support/control-harness.js';
import { runCtl } from '../../proxy/cli/ctl.js';
import { DEFAULT_CONTROL_PORT } from '../../proxy/control/server.js';
import { socketRequest } from '../../proxy/control/socket-access.js';
import { runLeakTestCli } from '../../proxy/system-dns/leak-test-cli.js';
import { ServiceConnection } from './service-connection.js';

interface Squatter {
  readonly port: number;
  /** Every request it received, as text: request line, headers, body. */
  readonly seen: string[];
}

function listen(server: http.Server, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, host, () => resolve(true));
  });
}

/** Another user's program on the port: it answers like a dotstub would, to be trusted, and keeps what it is sent. */
async function squat(host: '127.0.0.1' | '::1', preferred = DEFAULT_CONTROL_PORT): Promise<Squatter> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push(`${req.method ?? ''} ${req.url ?? ''}\n${JSON.stringify(req.headers)}\n${body}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"records":[]}');
    });
  });
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  if (!(await listen(server, preferred, host))) {
    // This machine's 5380 is someone else's already: take another, and give it to dotstub as its default.
    await listen(server, 0, host);
  }
  return { port: (server.address() as net.AddressInfo).port, seen };
}

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-squat-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const BASE = { resolverArg: '127.0.0.1:9#dns.test', warm: false, watchNetwork: false } as const;

describe('another program holds the control port before dotstub starts', () => {
  test('the service (default port, control socket): no browser API elsewhere, said in words, and no client gives the squatter the token', async () => {
    const squatter = await squat('127.0.0.1');
    const dir = tmpDir();
    const sock = path.join(dir, 'control.sock');
    const log: string[] = [];
    const h = await startControl({ ...BASE, socket: { path: sock }, controlPort: { port: squatter.port, explicit: false }, log: (l) => log.push(l) });
    onTestFinished(() => h.stop());

    // Soft: every check below runs and is reported, whichever fails first.
    // Not silently elsewhere: no loopback listener at all, and the log says which address is held and why.
    expect.soft(h.server.loopbackUrl).toBeNull();
    expect.soft(h.service.controlUrl).toBeUndefined();
    const said = log.join('\n');
    expect.soft(said).toContain(`127.0.0.1:${squatter.port} is held by another program, so dotstub serves no browser dashboard`);
    expect.soft(said).toContain('must not be given the token');
    // The API still answers on the socket (its group is the authorization).
    expect.soft((await socketRequest({ socketPath: sock }, 'GET', '/api/status')).status).toBe(200);

    // dotstub ctl dashboard: no link, the reason instead.
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCtl(['dashboard'], { env: { DOTSTUB_CONTROL_SOCKET: sock }, out: (l) => out.push(l), err: (l) => err.push(l) });
    expect.soft(code).not.toBe(0);
    expect.soft(out.join('\n')).not.toContain(h.token);
    expect.soft(err.join('\n')).toContain('is held by another program');

    // The desktop app's connection to the service: no ready (no link, no token), the reason as its state.
    const conn = new ServiceConnection({ socketPath: sock, pollMs: 60_000 });
    let readied = false;
    conn.on('ready', () => (readied = true));
    await conn.probe();
    expect.soft(readied).toBe(false);
    expect.soft(conn.state).toMatchObject({ phase: 'failed' });
    expect.soft(conn.state.phase === 'failed' && conn.state.reason).toContain('is held by another program');

    // dotstub leak-test with its defaults asks over the socket, not a guessed port with the token file.
    if (squatter.port === DEFAULT_CONTROL_PORT) {
      fs.writeFileSync(path.join(dir, 'token'), h.token, { mode: 0o600 });
      await runLeakTestCli(['--root', dir], { configDir: dir, socket: { path: sock, get: (p) => socketRequest({ socketPath: sock }, 'GET', p) } }).catch(() => 1);
    }

    // A browser's bookmark or reloaded tab, and scripts, reach the squatter: it must never have been handed the token.
    for (const request of squatter.seen) expect(request).not.toContain(h.token);
  });

  test('without a control socket (dotstub run by hand, no --control): it does not start, and says why', async () => {
    const squatter = await squat('127.0.0.1');
    const err = await startControl({ ...BASE, controlPort: { port: squatter.port, explicit: false } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain(`127.0.0.1:${squatter.port} is held by another program`);
    expect(String((err as Error).message)).toContain('--control-any-port');
    expect(squatter.seen).toEqual([]);
  });

  test('--control-any-port: a free port, said loudly; the link handed out names the port dotstub holds', async () => {
    const squatter = await squat('127.0.0.1');
    const sock = path.join(tmpDir(), 'control.sock');
    const log: string[] = [];
    const h = await startControl({ ...BASE, socket: { path: sock }, controlPort: { port: squatter.port, explicit: false, anyPort: true }, log: (l) => log.push(l) });
    onTestFinished(() => h.stop());
    expect(h.server.port).not.toBe(squatter.port);
    expect(log.join('\n')).toMatch(new RegExp(`WARNING: the control port 127\\.0\\.0\\.1:${squatter.port} is held by another program; the dashboard is on http://127\\.0\\.0\\.1:${h.server.port} instead`));
    const conn = new ServiceConnection({ socketPath: sock, pollMs: 60_000 });
    await conn.probe();
    expect(conn.state.phase === 'running' && new URL(conn.state.ready.dashboard as string).port).toBe(String(h.server.port));
    const out: string[] = [];
    expect(await runCtl(['dashboard'], { env: { DOTSTUB_CONTROL_SOCKET: sock }, out: (l) => out.push(l) })).toBe(0);
    expect(new URL(out.join('')).port).toBe(String(h.server.port));
    for (const request of squatter.seen) expect(request).not.toContain(h.token);
  });

  test('[::1] too: dotstub holds both loopback addresses at its port, and a program holding only [::1] counts as holding the port', async (ctx) => {
    const probe = net.createServer();
    if (!(await new Promise<boolean>((r) => probe.once('error', () => r(false)).listen(0, '::1', () => r(true))))) ctx.skip('this machine has no IPv6 loopback (::1): nothing to squat on there');
    probe.close();

    const h = await startControl({ ...BASE, warm: false });
    onTestFinished(() => h.stop());
    expect(h.server.ipv6).toBe(true);
    const v6 = await fetch(`http://[::1]:${h.server.port}/api/status`, { headers: { authorization: `Bearer ${h.token}` } });
    expect(v6.status).toBe(200);

    const squatter = await squat('::1');
    const sock = path.join(tmpDir(), 'control.sock');
    const log: string[] = [];
    const s = await startControl({ ...BASE, socket: { path: sock }, controlPort: { port: squatter.port, explicit: false }, log: (l) => log.push(l) });
    onTestFinished(() => s.stop());
    expect(s.server.loopbackUrl).toBeNull();
    expect(log.join('\n')).toContain(`[::1]:${squatter.port} is held by another program`);
    const conn = new ServiceConnection({ socketPath: sock, pollMs: 60_000 });
    await conn.probe();
    expect(conn.state.phase).toBe('failed');
    for (const request of squatter.seen) expect(request).not.toContain(s.token);
  });
});

/**
 * The control API on a Unix socket (issue 20, "one proxy per machine"): a
 * real app from startApp serving it on a temp path, and `dotstub ctl` run
 * as another user (setpriv as nobody) with and without the socket's group.
 * The kernel's permission check is the authorization: no token on the
 * socket, the token still on loopback HTTP. The "system" whose DNS ctl
 * turns on, pauses and off is a resolv.conf copy under a temp root (the
 * machine's own DNS is never touched).
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiClient, rawRequest, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { dotstubArgv } from '../../test-support/netlab.js';
import { waitForState } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { systemHost } from '../system-dns/host.js';
import { SystemDnsManager } from '../system-dns/manager.js';
import { resolvConfLookup } from '../system-dns/os-lookup.js';
import { runCtl } from '../cli/ctl.js';
import type { DashboardLinkView, ResolversView, StatusView } from './api-types.js';
import { groupId } from './server.js';
import { skipWith } from '../../test-support/skips.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\n';
/** The socket's group: a gid nobody is not in (any number does for chown; no group is created on this machine). */
const GROUP = 4242;
const asRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('sh', ['-c', 'command -v setpriv']).status === 0;

/** Runs `dotstub ctl ARGS` as nobody, in the socket's group or not (asynchronously: the server is in this process). */
function ctlAs(args: readonly string[], inGroup: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', ...(inGroup ? [`--groups=${GROUP}`] : ['--clear-groups']), ...dotstubArgv(['ctl', ...args])],
      { cwd: REPO, encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: '/nonexistent' } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

let unbound: UnboundServer;
let h: ControlHarness;
let dir: string;
let sock: string;
let root: string;
const resolvConf = (): string => fs.readFileSync(path.join(root, 'etc', 'resolv.conf'), 'utf8');

beforeAll(async () => {
  unbound = await startUnbound({ names: 10 });
  // Searchable by everyone (as /run/dotstub is): the socket's own mode decides.
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sock-'));
  fs.chmodSync(dir, 0o755);
  sock = path.join(dir, 'control.sock');
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sock-root-'));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), ORIGINAL);
  h = await startControl({
    resolverArg: unbound.resolverArg,
    socket: { path: sock, group: asRoot ? GROUP : process.getgid?.() ?? 0 },
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
  await waitForState(h.proxy, 'off', 5000);
}, 30_000);

afterAll(async () => {
  await h?.stop();
  await unbound?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

/** A raw request on the socket, with no token, Host or Origin of ours. */
function onSocket(method: string, pathname: string, body?: unknown): Promise<{ status: number; json: <T>() => T; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: sock, method, path: pathname, headers: payload ? { 'content-type': 'application/json', host: 'evil.example', origin: 'http://evil.example' } : { host: 'evil.example' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: <T>() => JSON.parse(text) as T }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the control API on a Unix socket', () => {
  test('the socket is 0660 and owned by the given group; the file goes when the app stops', () => {
    const st = fs.statSync(sock);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o660);
    if (asRoot) expect(st.gid).toBe(GROUP);
    expect(h.server.socketPath).toBe(sock);
  });

  test('on the socket no token is asked; on loopback HTTP the token still is, and the dashboard link is handed out on the socket only', async () => {
    const status = await onSocket('GET', '/api/status');
    expect(status.status).toBe(200);
    expect(status.json<StatusView>().resolver.id).toBe(`custom:127.0.0.1:${unbound.port}`);
    // Over HTTP: no token, no answer; the link isn't served there even with it.
    expect((await rawRequest(h.url, '/api/status', { headers: {} })).status).toBe(401);
    expect((await apiClient(h).get('/api/dashboard-link')).status).toBe(404);
    const link = (await onSocket('GET', '/api/dashboard-link')).json<DashboardLinkView>();
    expect(link.url).toBe(`${h.url}/#token=${encodeURIComponent(h.token)}`);
    // The token from the socket opens the loopback API.
    expect((await rawRequest(h.url, '/api/status', { headers: { authorization: `Bearer ${link.token}` } })).status).toBe(200);
    // The dashboard's files are on HTTP only.
    const page = await onSocket('GET', '/');
    expect(page.status).toBe(404);
    expect(page.text).toContain(h.url);
  });

  test('a second app on the same socket path is refused while the first serves it; a stale file is replaced', async () => {
    await expect(startControl({ resolverArg: unbound.resolverArg, socket: { path: sock } })).rejects.toThrow(/in use: another dotstub/);
    const stale = path.join(dir, 'stale.sock');
    fs.writeFileSync(stale, '');
    const other = await startControl({ resolverArg: '127.0.0.1:9#dns.test', warm: false, socket: { path: stale } });
    try {
      expect(fs.statSync(stale).isSocket()).toBe(true);
    } finally {
      await other.stop();
    }
    expect(fs.existsSync(stale)).toBe(false);
  });

  test('a group that does not exist is an error that says what to do', () => {
    const groups = path.join(dir, 'group');
    fs.writeFileSync(groups, 'root:x:0:\nnetdev:x:108:alice\n');
    expect(groupId('netdev', groups)).toBe(108);
    expect(() => groupId('dotstub', groups)).toThrow(/group "dotstub" does not exist: the dotstub package creates it \(addgroup --system dotstub\)/);
  });

  test('dotstub ctl in-process: status, use, dashboard; bad usage exits 2', async () => {
    const lines: string[] = [];
    const errs: string[] = [];
    const ctl = (args: string[]): Promise<number> => runCtl([...args, '--socket', sock], { out: (l) => lines.push(l), err: (l) => errs.push(l) });
    expect(await ctl(['status'])).toBe(0);
    expect(lines.join('\n')).toMatch(/^private DNS: off — private DNS is not enabled for this machine/m);
    expect(lines.join('\n')).toMatch(/^resolvers: .*quad9.* \(dotstub ctl use ID\)$/m);
    expect(await ctl(['dashboard'])).toBe(0);
    expect(lines.at(-1)).toBe(`${h.url}/#token=${encodeURIComponent(h.token)}`);
    expect(await ctl(['pause', 'forever'])).toBe(2);
    expect(errs.at(-1)).toMatch(/give a duration like 30s, 5m or 1h/);
    expect(await ctl(['use', 'no-such-resolver'])).toBe(1);
    expect(errs.at(-1)).toMatch(/no resolver "no-such-resolver"; choose one of: .*quad9/);
    // A refusal from the API: what happened, what to do, and its code.
    expect(await ctl(['pause', '5m'])).toBe(1);
    expect(errs.at(-1)).toMatch(/\. Turn system DNS on first\. \(system_dns_not_enabled\)$/);
  });

  test('dotstub ctl outside a service: not installed, or installed and not running, each with what to do', async () => {
    const errs: string[] = [];
    const missing = path.join(dir, 'none', 'control.sock');
    const unit = path.join(dir, 'dotstub.service');
    const ctl = (unitFiles: string[]): Promise<number> => runCtl(['status', '--socket', missing], { out: () => undefined, err: (l) => errs.push(l), unitFiles });
    expect(await ctl([unit])).toBe(1);
    expect(errs.at(-1)).toMatch(/the dotstub service is not installed on this machine .*install the dotstub package/);
    fs.writeFileSync(unit, '[Unit]\n');
    expect(await ctl([unit])).toBe(1);
    expect(errs.at(-1)).toMatch(/the dotstub service is not running .*"sudo systemctl enable --now dotstub", or with "Turn on private DNS" in the dotstub app/);
  });
});

describe('dotstub ctl as another user (setpriv as nobody)', skipWith(!asRoot ? 'needs root (it runs ctl as nobody)' : hasSetpriv ? null : 'setpriv is not installed (apt-get install util-linux)'), () => {
  test('outside the group: refused with a sentence that says what to do, and nothing changes', async () => {
    const r = await ctlAs(['enable', '--socket', sock], false);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/permission denied on .*control\.sock: you are not in the dotstub group; an administrator adds you with "sudo adduser nobody dotstub", then log out and in again/);
    expect(resolvConf()).toBe(ORIGINAL);
  });

  test('in the group, without a token or sudo: enable, pause, resume, switch resolver, disable; resolv.conf back byte for byte', async () => {
    const on = await ctlAs(['enable', '--socket', sock], true);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^private DNS: on/);
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);

    const paused = await ctlAs(['pause', '10m', '--socket', sock], true);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^private DNS: paused until \d\d:\d\d — .*To turn it back on now: dotstub ctl resume$/m);
    expect(resolvConf()).toBe(ORIGINAL);

    const back = await ctlAs(['resume', '--socket', sock], true);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/^private DNS: on/);

    // A second resolver (on loopback, not answering: ctl asks it first and refuses; --anyway switches all the same).
    const added = await apiClient(h).post('/api/resolvers', { label: 'second', address: '127.0.0.1', port: 9, authName: 'dns.test' });
    expect(added.status, added.text).toBe(201);
    const asked = await ctlAs(['use', 'second', '--socket', sock], true);
    expect(asked.code).toBe(1);
    expect(asked.stderr).toMatch(/second didn’t answer \(connection refused\)\. Nothing was changed/);
    const use = await ctlAs(['use', 'second', '--anyway', '--socket', sock], true);
    expect(use.code, use.stderr).toBe(0);
    expect(use.stdout).toMatch(/^resolver: second \(.*switched anyway/);
    const active = (await onSocket('GET', '/api/resolvers')).json<ResolversView>();
    expect(active.resolvers.find((r) => r.id === active.active)?.label).toBe('second');

    const off = await ctlAs(['disable', '--socket', sock], true);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/^private DNS: off/);
    expect(resolvConf()).toBe(ORIGINAL);
  }, 60_000);
});

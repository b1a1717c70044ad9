/**
 * The `dotstub` command with its control server, as scripts and the
 * dashboard's e2e tests use it: --ready-file, --config-dir, the dashboard
 * link, settings and the resolver choice across a real process restart.
 * Runs the TypeScript sources through tsx (no build needed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiClient, openStream, tempConfigDir } from '../../test-support/control-harness.js';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { waitFor } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { ResolverView, ResolversView, Settings, StatusView, StreamBatch } from './api-types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Ready {
  dns: { host: string; port: number }[];
  control: string;
  token: string;
  dashboard: string;
  pid: number;
}

interface Running {
  readonly child: ChildProcess;
  readonly ready: Ready;
  stderr(): string;
  stop(): Promise<number | null>;
}

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function spawnCli(args: readonly string[]): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })", '--', ...args],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  children.add(child);
  let err = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    children.delete(child);
    resolve(code);
  }));
  return { child, stderr: () => err, exited };
}

async function startCli(args: readonly string[], control = true): Promise<Running> {
  const readyFile = path.join(tempConfigDir(), 'ready.json');
  const { child, stderr, exited } = spawnCli([...args, '--listen', '127.0.0.1:0', ...(control ? ['--control', '127.0.0.1:0'] : []), '--ready-file', readyFile]);
  let gone = false;
  void exited.then(() => (gone = true));
  await waitFor(() => fs.existsSync(readyFile) || gone, 20_000, 'ready file');
  if (gone) throw new Error(`dotstub exited: ${stderr()}`);
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as Ready;
  return {
    child,
    ready,
    stderr,
    async stop() {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 8000);
      const code = await exited;
      clearTimeout(t);
      expect(fs.existsSync(readyFile)).toBe(false);
      return code;
    },
  };
}

let a: UnboundServer;
let b: UnboundServer;
beforeAll(async () => {
  a = await startUnbound({ names: 100, extra: { 'which.test.': '198.51.100.1' } });
  b = await startUnbound({ names: 100, extra: { 'which.test.': '198.51.100.2' } });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

describe('dotstub CLI with the control API', () => {
  test('ready file, dashboard link, live stream with curl-like client, settings and resolver survive a restart', async () => {
    const dir = tempConfigDir();
    const first = await startCli(['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--config-dir', dir]);
    let bId: string;
    try {
      const { ready } = first;
      expect(ready.pid).toBe(first.child.pid);
      expect(ready.dns).toEqual([{ host: '127.0.0.1', port: expect.any(Number) as unknown }]);
      expect(ready.control).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.token).toBe(fs.readFileSync(path.join(dir, 'token'), 'utf8').trim());
      expect(first.stderr()).toContain(`dotstub: dashboard at ${ready.control}/#token=${ready.token}`);
      expect(ready.dashboard).toBe(`${ready.control}/#token=${ready.token}`);
      const h = { url: ready.control, token: ready.token, origin: ready.control };
      const api = apiClient(h);
      await waitFor(() => first.stderr().includes('private:'), 5000, 'private state');

      // A script watching live queries on the stream.
      const stream = await openStream(h);
      const udp = await UdpClient.open(ready.dns[0]?.port ?? 0);
      try {
        for (let i = 0; i < 10; i++) await udp.query(`n${i}.test`);
        await waitFor(
          () => stream.events.flatMap((e) => (JSON.parse(e.data) as StreamBatch).queries).filter((q) => q.name?.startsWith('n')).length >= 10,
          3000,
          'queries on the stream',
        );
      } finally {
        udp.close();
        stream.close();
      }

      bId = (await api.post('/api/resolvers', { address: '127.0.0.1', port: b.port, authName: 'dns.test' })).json<ResolverView>().id;
      expect((await api.put('/api/resolvers/active', { id: bId })).status).toBe(200);
      expect((await api.put('/api/settings', { poolSize: 2, recordNames: false })).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(first.stderr()).toMatch(/stopped after \d+ queries/);

    // Restart without --resolver: the saved choice and settings are back.
    const second = await startCli(['--ca', a.pki.caFile, '--config-dir', dir]);
    try {
      const api = apiClient({ url: second.ready.control, token: second.ready.token, origin: second.ready.control });
      expect(second.ready.token).toBe(first.ready.token);
      expect((await api.get('/api/settings')).json<Settings>()).toMatchObject({ poolSize: 2, recordNames: false });
      expect((await api.get('/api/resolvers')).json<ResolversView>().active).toBe(bId);
      const udp = await UdpClient.open(second.ready.dns[0]?.port ?? 0);
      try {
        expect(firstA(await udp.query('which.test'))).toBe('198.51.100.2');
      } finally {
        udp.close();
      }
    } finally {
      expect(await second.stop()).toBe(0);
    }

    // An explicit --resolver and flags win for one run, without being saved.
    const third = await startCli(['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--config-dir', dir, '--pool-size', '1']);
    try {
      const api = apiClient({ url: third.ready.control, token: third.ready.token, origin: third.ready.control });
      expect((await api.get('/api/status')).json<StatusView>().resolver.id).toBe(`custom:127.0.0.1:${a.port}`);
      expect((await api.get('/api/settings')).json<Settings>().poolSize).toBe(1);
      const saved = JSON.parse(fs.readFileSync(path.join(dir, 'resolvers.json'), 'utf8')) as { active: string };
      expect(saved.active).toBe(bId);
      expect((JSON.parse(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8')) as Settings).poolSize).toBe(2);
    } finally {
      expect(await third.stop()).toBe(0);
    }

    // A corrupt settings file: reported at start, the last good settings used.
    fs.writeFileSync(path.join(dir, 'settings.json'), '{"poolSize": 2,');
    const fourth = await startCli(['--ca', a.pki.caFile, '--config-dir', dir]);
    try {
      expect(fourth.stderr()).toMatch(/settings\.json: not valid JSON/);
      expect(fourth.stderr()).toMatch(/using the last good copy/);
      const api = apiClient({ url: fourth.ready.control, token: fourth.ready.token, origin: fourth.ready.control });
      expect((await api.get('/api/settings')).json<Settings>()).toMatchObject({ poolSize: 2, recordNames: false });
      expect((await api.get('/api/status')).json<StatusView>().problems?.[0]?.message).toMatch(/not valid JSON/);
    } finally {
      expect(await fourth.stop()).toBe(0);
    }
  });

  test('--no-control serves nothing; a non-loopback --control is refused; a busy explicit port is an error', async () => {
    const dir = tempConfigDir();
    const quiet = await startCli(['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--config-dir', dir, '--no-control'], false);
    try {
      expect(quiet.ready.control).toBeNull();
      expect(quiet.ready.token).toBeNull();
      expect(fs.existsSync(path.join(dir, 'token'))).toBe(false);
    } finally {
      await quiet.stop();
    }

    const open = spawnCli(['--resolver', a.resolverArg, '--listen', '127.0.0.1:0', '--control', '0.0.0.0:5380', '--config-dir', dir]);
    expect(await open.exited).toBe(2);
    expect(open.stderr()).toMatch(/loopback address only/);

    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busyPort = (blocker.address() as net.AddressInfo).port;
    try {
      const busy = spawnCli(['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--listen', '127.0.0.1:0', '--control', `127.0.0.1:${busyPort}`, '--config-dir', dir]);
      expect(await busy.exited).toBe(1);
      expect(busy.stderr()).toMatch(new RegExp(`port ${busyPort} on 127\\.0\\.0\\.1 is in use`));
    } finally {
      blocker.close();
    }
  });
});

/**
 * The `dotstub` command with its control server, as scripts and the
 * dashboard's e2e tests use it: --ready-file, --config-dir, the dashboard
 * link, settings and the resolver choice across a real process restart.
 * Runs the TypeScript sources through tsx (no build needed).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiClient, openStream, tempConfigDir } from '../../test-support/control-harness.js';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { waitFor } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { ResolverView, ResolversView, Settings, StatusView, StreamBatch, SystemDnsView } from './api-types.js';
import { socketRequest } from './socket-access.js';

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
  /** Everything it wrote, stdout and stderr, as a journal would keep it. */
  output(): string;
  stop(): Promise<number | null>;
}

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; stderr: () => string; output: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })", '--', ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } },
  );
  children.add(child);
  let err = '';
  let all = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    err += d;
    all += d;
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => (all += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    children.delete(child);
    resolve(code);
  }));
  return { child, stderr: () => err, output: () => all, exited };
}

async function startCli(args: readonly string[], control = true, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const readyFile = path.join(tempConfigDir(), 'ready.json');
  const { child, stderr, output, exited } = spawnCli([...args, '--listen', '127.0.0.1:0', ...(control ? ['--control', '127.0.0.1:0'] : []), '--ready-file', readyFile], env);
  let gone = false;
  void exited.then(() => (gone = true));
  await waitFor(() => fs.existsSync(readyFile) || gone, 20_000, 'ready file');
  if (gone) throw new Error(`dotstub exited: ${stderr()}`);
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as Ready;
  return {
    child,
    ready,
    stderr,
    output,
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
      // The link (it holds the token) is the ready file's (0600), never the log's: the log says where it is.
      expect(first.stderr()).toContain(`dotstub: dashboard at ${ready.control}/ (its link holds the access token and is never logged: open ${ready.control}/#token= followed by the contents of ${path.join(dir, 'token')}, which only you can read)`);
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
    expect(first.output()).not.toContain(first.ready.token);

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
      expect(busy.stderr()).toMatch(new RegExp(`127\\.0\\.0\\.1:${busyPort} is held by another program: choose another port with --control`));
    } finally {
      blocker.close();
    }
  });
});

/** `dotstub ARGS` run to its end, as a user runs it: its exit code and what it printed. */
function runDotstub(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })", '--', ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: '1', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** A temp root whose etc/resolv.conf is `text` (none when null): the "system" a test's dotstub reads and takes over. */
function tempRoot(text: string | null): string {
  const root = tempConfigDir();
  fs.mkdirSync(path.join(root, 'etc'));
  if (text !== null) fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), text);
  return root;
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Asks until `predicate` holds (each answer is the service's own: no fixed wait). */
async function until(predicate: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const HHMM = String.raw`\d\d:\d\d`;

/** The sentence the leak watch writes for the copy's other nameserver (network/leak-watch.ts). */
const forwarderPath = (conf: string, port: number): string =>
  `bypass possible: ${conf} names 127.0.0.1:${port}, a local forwarder dotstub doesn't control (NetworkManager's dnsmasq, or another stub), and not dotstub: lookups sent there go around dotstub. To fix: turn private DNS on for this machine (System DNS).`;

test('SIGTERM during start-up (systemd stopping it, a script that saw the dashboard line) stops it cleanly once started: the takeover given back, the ready file gone, exit 0, never killed by the signal', async () => {
  const root = tempRoot('# from DHCP\nnameserver 10.99.0.1\n');
  const original = fs.readFileSync(path.join(root, 'etc', 'resolv.conf'), 'utf8');
  const dir = tempConfigDir();
  // The last run was killed while private DNS was on (the watchdog's note): this start takes the system's DNS over again.
  fs.writeFileSync(path.join(dir, 'system-dns.liveness.json'), JSON.stringify({ at: new Date().toISOString(), why: 'the takeover has no owner (its owner, process 999999, is gone)' }));
  const readyFile = path.join(dir, 'ready.json');
  const { child, stderr, exited } = spawnCli(['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--config-dir', dir, '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0', '--ready-file', readyFile, '--system-dns', '--system-dns-root', root]);
  // The first line the proxy prints comes from inside its start: the signal lands before it is done starting.
  await waitFor(() => /listening on/.test(stderr()), 20_000, 'the listening line');
  child.kill('SIGTERM');
  const code = await exited;
  expect([code, child.signalCode], stderr()).toEqual([0, null]);
  expect(stderr()).toMatch(/SIGTERM \(during start-up\): answering \d+ queries in flight, then stopping/);
  expect(stderr()).toMatch(/private DNS was turned back on/);
  expect(fs.existsSync(readyFile)).toBe(false);
  expect(fs.readFileSync(path.join(root, 'etc', 'resolv.conf'), 'utf8')).toBe(original);
});

describe('dotstub ctl and system-dns status say what is so (issue 29)', () => {
  // One service, as the package runs it (control socket, system DNS), on a copy of the system files whose
  // resolv.conf names another server (unbound b, on loopback): a path around dotstub until private DNS is on.
  let root: string;
  let dir: string;
  let sock: string;
  let proxy: Running;
  const ctl = (...args: string[]): ReturnType<typeof runDotstub> => runDotstub(['ctl', ...args, '--socket', sock]);
  const onSocket = async <T>(method: 'GET' | 'POST', pathname: string, body?: unknown): Promise<T> => (await socketRequest({ socketPath: sock }, method, pathname, body)).body as T;
  beforeAll(async () => {
    root = tempRoot(`# from DHCP\nnameserver 127.0.0.1:${b.port}\n`);
    dir = tempConfigDir();
    sock = path.join(dir, 'control.sock');
    proxy = await startCli(
      ['--resolver', a.resolverArg, '--ca', a.pki.caFile, '--config-dir', dir, '--control-socket', sock, '--system-dns', '--system-dns-root', root, '--system-dns-state-dir', dir],
      true,
      // Routing by name owner reads the copy (never this machine's network), and the leak watch with it.
      { DOTSTUB_NAME_ROUTING: 'on' },
    );
  }, 30_000);
  afterAll(async () => {
    if (proxy) expect(await proxy.stop()).toBe(0);
  });

  test('ctl status and system-dns status give the leak watch’s reading: the path around dotstub, then "0 leaked since", never "none seen"', async () => {
    const bypass = forwarderPath(path.join(root, 'etc', 'resolv.conf'), b.port);
    const before = await ctl('status');
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain(`\nleaks: ${bypass}\n`);
    expect(before.stdout).not.toMatch(/none seen/);

    // system-dns status, with a dotstub answering on the control socket: its watch, said as such.
    const sys = await runDotstub(['system-dns', 'status', '--root', root, '--state-dir', dir], { DOTSTUB_CONTROL_SOCKET: sock });
    expect(sys.code, sys.stderr).toBe(0);
    expect(sys.stdout).toContain(`\nleaks (the running dotstub's watch): ${bypass}\n`);
    expect(sys.stdout).not.toMatch(/none seen/);

    const on = await ctl('enable');
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^private DNS: on — /);
    // The watch re-reads the copy once it is written: awaited on the API's own reading.
    await until(async () => (await onSocket<StatusView>('GET', '/api/status')).leaks.cleanSince !== null, 10_000, 'a clean reading');
    const after = await ctl('status');
    expect(after.code, after.stderr).toBe(0);
    // The count is the host's own network changes since (another test's lab may add a link meanwhile).
    expect(after.stdout).toMatch(new RegExp(`\\nleaks: 0 leaked since ${HHMM} across \\d+ network changes?\\n`));
  }, 60_000);

  test('ctl pause says paused, until when and how to resume (status too); disable during a pause ends it', async () => {
    expect((await ctl('enable')).code).toBe(0);
    const paused = await ctl('pause', '10m');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(new RegExp(`^private DNS: paused until ${HHMM} — this machine asks its usual resolver, unencrypted, until then; then private DNS comes back by itself\\. To turn it back on now: dotstub ctl resume\\n$`));
    const st = await ctl('status');
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/^private DNS: paused until /);
    // The banner's words for a pause (renderer/src/lib/banner.ts), not "off".
    expect(st.stdout).toContain('\nstate: Private DNS is paused: this machine uses its usual DNS for now\n');
    expect(st.stdout).not.toMatch(/: off\b/);

    // "disable" is off for good: the pause must not bring private DNS back by itself.
    const off = await ctl('disable');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/^private DNS: off — /);
    expect((await onSocket<SystemDnsView>('GET', '/api/system-dns')).pausedUntil).toBeNull();
  }, 60_000);

  test('ctl use probes first: a resolver that does not answer is refused with the probe’s words and nothing changes; --anyway insists; a live one says its figure', async () => {
    const post = (body: object): Promise<ResolverView> => onSocket<ResolverView>('POST', '/api/resolvers', body);
    const dead = await post({ label: 'Dead end', address: '127.0.0.1', port: await closedPort(), authName: 'dns.test' });
    const live = await post({ label: 'Live one', address: '127.0.0.1', port: b.port, authName: 'dns.test' });
    const active = async (): Promise<ResolverView | undefined> => {
      const v = await onSocket<ResolversView>('GET', '/api/resolvers');
      return v.resolvers.find((r) => r.id === v.active);
    };
    const from = await active();

    const refused = await ctl('use', 'Dead end');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`dotstub ctl: Dead end didn’t answer (connection refused). Nothing was changed: ${from?.label ?? '?'} still answers your lookups. To switch anyway: dotstub ctl use "Dead end" --anyway`);
    expect((await active())?.id).toBe(from?.id);

    const insisted = await ctl('use', 'Dead end', '--anyway');
    expect(insisted.code, insisted.stderr).toBe(0);
    expect(insisted.stdout).toBe(`resolver: Dead end (${dead.id}) — it didn’t answer (connection refused); switched anyway: lookups fail until it answers\n`);
    expect((await active())?.id).toBe(dead.id);

    const good = await ctl('use', 'Live one');
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(new RegExp(`^resolver: Live one \\(${live.id.replace(/[.]/g, '\\.')}\\) — answered in \\d+(\\.\\d+)? ms just before the switch\\n$`));
    expect((await active())?.id).toBe(live.id);
  }, 60_000);

  test('the service never writes the dashboard link (it holds the token): its log names dotstub ctl dashboard, which prints the link', async () => {
    const { token, control, dashboard } = proxy.ready;
    // Everything the service wrote, stdout and stderr (a journal's lines): not one holds the token.
    for (const line of proxy.output().split('\n')) expect(line).not.toContain(token);
    expect(proxy.stderr()).toContain(`dotstub: dashboard at ${control}/ (its link holds the access token and is never logged: dotstub ctl dashboard prints it)`);
    const link = await ctl('dashboard');
    expect(link.code, link.stderr).toBe(0);
    expect(link.stdout).toBe(`${dashboard}\n`);
    expect(link.stdout).toContain(`#token=${encodeURIComponent(token)}`);
  }, 60_000);
});

describe('dotstub ctl status on a dotstub that is failing safe, with no leak reading', () => {
  test('the dashboard’s words, "Stopped — failing safe", not "blocked"; "leaks: not measured" and why (system-dns status then adds one reading now)', async () => {
    const dir = tempConfigDir();
    const sock = path.join(dir, 'control.sock');
    const stopped = await startCli(['--resolver', `127.0.0.1:${await closedPort()}#dns.test`, '--ca', a.pki.caFile, '--config-dir', dir, '--control-socket', sock]);
    try {
      await until(async () => ((await socketRequest({ socketPath: sock }, 'GET', '/api/status')).body as StatusView).state === 'blocked', 10_000, 'failing safe');
      const st = await runDotstub(['ctl', 'status', '--socket', sock]);
      expect(st.code, st.stderr).toBe(0);
      expect(st.stdout).toMatch(/\nstate: Stopped — failing safe, no DNS\. \S/);
      expect(st.stdout).not.toMatch(/blocked/);
      expect(st.stdout).toContain("\nleaks: not measured: this run of dotstub doesn't read the system's DNS settings (started with routing by name owner off)\n");

      // system-dns status asks it too: its watch measured nothing, so one reading now follows, said as one.
      const root = tempRoot(`nameserver 127.0.0.1:${b.port}\n`);
      const sys = await runDotstub(['system-dns', 'status', '--root', root, '--state-dir', tempConfigDir()], { DOTSTUB_CONTROL_SOCKET: sock });
      expect(sys.code, sys.stderr).toBe(0);
      expect(sys.stdout).toContain("\nleaks (the running dotstub's watch): not measured: this run of dotstub doesn't read the system's DNS settings (started with routing by name owner off)\n");
      expect(sys.stdout).toContain(`\nleaks (one reading now, not a watch): ${forwarderPath(path.join(root, 'etc', 'resolv.conf'), b.port)}\n`);
    } finally {
      expect(await stopped.stop()).toBe(0);
    }
  }, 60_000);
});

describe('dotstub system-dns status with no dotstub running: one reading now, said as one', () => {
  test('a resolv.conf naming another server: that path, from one reading', async () => {
    const root = tempRoot(`# from DHCP\nnameserver 127.0.0.1:${b.port}\n`);
    const none = path.join(tempConfigDir(), 'control.sock');
    const r = await runDotstub(['system-dns', 'status', '--root', root, '--state-dir', tempConfigDir()], { DOTSTUB_CONTROL_SOCKET: none });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`\nleaks (one reading now, not a watch: no dotstub answered on ${none}): ${forwarderPath(path.join(root, 'etc', 'resolv.conf'), b.port)}\n`);
  }, 30_000);

  test('no resolv.conf to read: not measured, and why; never "none seen"', async () => {
    const root = tempRoot(null);
    const none = path.join(tempConfigDir(), 'control.sock');
    const r = await runDotstub(['system-dns', 'status', '--root', root, '--state-dir', tempConfigDir()], { DOTSTUB_CONTROL_SOCKET: none });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`\nleaks (one reading now, not a watch: no dotstub answered on ${none}): not measured: ${path.join(root, 'etc', 'resolv.conf')} could not be read\n`);
    expect(r.stdout).not.toMatch(/none seen/);
  }, 30_000);
});

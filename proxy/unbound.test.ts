/**
 * The proxy against a real DoT server (Debian's unbound) with real clients
 * (dig, kdig) and our own UDP/TCP clients under concurrency.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, onTestFinished, test, vi } from 'vitest';
import { expectedA, firstA, TcpClient, UdpClient } from '../test-support/dns-client.js';
import { startProxy, waitFor, waitForEvent, waitForState, type Harness } from '../test-support/proxy-harness.js';
import { freePort, startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { DEFAULT_POOL_OPTIONS } from './upstream/pool/options.js';

const run = promisify(execFile);

/** Runs a command expected to fail; resolves with its exit code and output. */
async function runFailing(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  try {
    await run(cmd, args, env ? { env } : {});
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
}
const NAMES = 1000;

let unbound: UnboundServer;
let h: Harness;

beforeAll(async () => {
  unbound = await startUnbound({ names: NAMES, keepaliveMs: 20_000 });
  h = await startProxy({ resolverArg: unbound.resolverArg });
  await waitForState(h.proxy, 'private', 10_000);
});
afterAll(async () => {
  await h?.stop();
  await unbound?.stop();
});

async function dig(...args: string[]): Promise<string> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(h.port), '+tries=1', '+time=3', ...args]);
  return stdout;
}

describe('real clients through the proxy to unbound over TLS', () => {
  test('dig over UDP and TCP, kdig over TCP', async () => {
    expect((await dig('+short', 'n7.test')).trim()).toBe(expectedA(7));
    const tcp = await dig('+tcp', 'n8.test', 'AAAA');
    expect(tcp).toMatch(/status: NOERROR/);
    expect(tcp).toMatch(/n8\.test\.\s+\d+\s+IN\s+AAAA\s+2001:db8::8/);
    const { stdout } = await run('kdig', ['@127.0.0.1', '-p', String(h.port), '+tcp', '+short', 'n9.test']);
    expect(stdout.trim()).toBe(expectedA(9));
    expect((await dig('nothing.example')).toString()).toMatch(/status: NXDOMAIN/);
  });

  test('the TLS connection is opened at start and reused; unbound announces its keepalive', async () => {
    const before = h.proxy.counters.connectionHits;
    await dig('+short', 'n10.test');
    expect(h.proxy.counters.connectionHits).toBe(before + 1);
    const [conn] = h.proxy.connections();
    expect(conn).toMatchObject({ state: 'open', verified: true, tlsVersion: 'TLSv1.3' });
    expect(conn?.keepaliveMs).toBe(20_000);
    // Closed a tenth early (at most 1 s: connection/keepalive.ts), so the close is ours, never a race with unbound's.
    expect(conn?.idleTimeoutMs).toBe(19_000);
  });

  test('an answer too big for UDP gets TC; dig retries over TCP and gets it whole', async () => {
    const noEdns = await dig('+noedns', '+ignore', 'big.test', 'TXT');
    expect(noEdns).toMatch(/flags:[^;]*\btc\b/);
    const followed = await dig('+noedns', 'big.test', 'TXT');
    expect(followed).toMatch(/ANSWER: 12/);
    // With a 4096-byte EDNS buffer it fits in one UDP answer.
    expect(await dig('+bufsize=4096', '+ignore', 'big.test', 'TXT')).toMatch(/ANSWER: 12/);
  });

  test('EDNS: the client gets an OPT back only if it sent one, and never our TLS-hop padding', async () => {
    const c = await UdpClient.open(h.port);
    try {
      const withEdns = await c.query('n11.test', { edns: 1232 });
      const opt = withEdns.packet.additionals?.find((r) => r.type === 'OPT');
      expect(opt).toBeDefined();
      expect(opt && 'options' in opt ? opt.options.map((o) => o.code) : []).not.toContain(12);
      const noEdns = await c.query('n12.test', { edns: null });
      expect(noEdns.packet.additionals?.find((r) => r.type === 'OPT')).toBeUndefined();
      expect(firstA(noEdns)).toBe(expectedA(12));
    } finally {
      c.close();
    }
  });

  test('10,000 queries from 50 clients over UDP and TCP: every answer correct', async () => {
    const clients = 50;
    const perClient = 200;
    const before = { ...h.proxy.counters };
    const work = Array.from({ length: clients }, async (_, k) => {
      const useTcp = k % 2 === 1;
      const c = useTcp ? await TcpClient.open(h.port) : await UdpClient.open(h.port);
      try {
        // Each client keeps up to 20 queries outstanding.
        let wrong = 0;
        for (let batch = 0; batch < perClient; batch += 20) {
          const answers = await Promise.all(
            Array.from({ length: 20 }, (_, j) => {
              const i = (k * perClient + batch + j) % NAMES;
              return c.query(`n${i}.test`, { timeoutMs: 10_000 }).then((a) => ({ a, i }));
            }),
          );
          for (const { a, i } of answers) {
            if (a.rcode !== 'NOERROR' || firstA(a) !== expectedA(i) || a.packet.questions?.[0]?.name !== `n${i}.test`) wrong++;
          }
        }
        return wrong;
      } finally {
        c.close();
      }
    });
    const wrong = (await Promise.all(work)).reduce((x, y) => x + y, 0);
    expect(wrong).toBe(0);
    expect(h.proxy.counters.answers - before.answers).toBe(clients * perClient);
    expect(h.proxy.counters.servfails - before.servfails).toBe(0);
    // All of it over the warm connection and the extra ones its bursts opened (issue 12), each opened once.
    expect(h.proxy.counters.handshakesFull + h.proxy.counters.handshakesResumed).toBe(1 + h.proxy.counters.burstConnections);
    expect(h.proxy.counters.burstConnections).toBeLessThanOrEqual(DEFAULT_POOL_OPTIONS.burstConnections ?? 0);
  });
});

describe('connection lifecycle with unbound', () => {
  test('after our idle close the connection stays closed (idle means idle, issue 23), and the next query re-opens it resuming the TLS session', async () => {
    // On a fake clock that otherwise keeps real time: after the idle close, running it on says at once whether
    // anything re-opens by itself (a re-open shows in connections() the moment it starts).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    const p = await startProxy({ resolverArg: unbound.resolverArg, pool: { idleTimeoutMs: 200 } });
    try {
      const events: string[] = [];
      p.proxy.on('connection', (e) => {
        if (e.type === 'close') events.push(`close:${e.reason}`);
        if (e.type === 'open') events.push(e.resumed ? 'open:resumed' : 'open:full');
      });
      const c = await UdpClient.open(p.port);
      expect(firstA(await c.query('n1.test'))).toBe(expectedA(1));
      await waitForEvent(p.proxy, 'connection', () => events.includes('close:idle'), 3000, 'our idle close');
      // Closed for being idle: not re-opened by itself (it was: a handshake per idle timeout, for nothing).
      await vi.advanceTimersByTimeAsync(2_000);
      expect(events.slice(events.indexOf('close:idle'))).toEqual(['close:idle']);
      expect(p.proxy.connections().filter((x) => x.state !== 'closed')).toHaveLength(0);
      expect(firstA(await c.query('n2.test'))).toBe(expectedA(2));
      expect(events.slice(events.indexOf('close:idle'))).toEqual(['close:idle', 'open:resumed']);
      c.close();
      expect(p.proxy.counters.handshakesFull).toBe(1);
      expect(p.proxy.counters.handshakesResumed).toBe(1);
    } finally {
      await p.stop();
    }
  });

  test('switching resolvers under load loses nothing: old queries finish, new ones go to the new resolver', async () => {
    const other = await startUnbound({ names: 10, extra: { 'which.test.': '198.51.100.2' } });
    const p = await startProxy({ resolverArg: unbound.resolverArg });
    try {
      await waitForState(p.proxy, 'private', 5000);
      const c = await UdpClient.open(p.port);
      const sent: Promise<unknown>[] = [];
      for (let i = 0; i < 400; i++) {
        sent.push(c.query(`n${i % 10}.test`, { timeoutMs: 5000 }));
        if (i === 200) void p.proxy.choice.choose((await import('./config/resolvers.js')).parseResolverArg(other.resolverArg));
        if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      const answers = (await Promise.all(sent)) as Awaited<ReturnType<UdpClient['query']>>[];
      expect(answers.filter((a) => a.rcode === 'NOERROR')).toHaveLength(400);
      const which = await c.query('which.test');
      expect(firstA(which)).toBe('198.51.100.2');
      c.close();
      await waitForEvent(p.proxy, 'connection', () => p.proxy.connections().every((x) => x.resolverId === p.proxy.resolver.id), 3000, 'old pool closed');
    } finally {
      await p.stop();
      await other.stop();
    }
  });
});

describe('the dotstub command', () => {
  const bin = path.resolve('bin/dotstub.js');

  test('answers dig through a real DoT server, logs each query, and stops cleanly on SIGTERM with in-flight queries answered', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [bin, '--resolver', unbound.resolverArg, '--ca', unbound.pki.caFile, '--listen', `127.0.0.1:${port}`, '--log', '--no-control'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /private: encrypted DNS/.test(err), 10_000, 'dotstub private');
      const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+short', 'n42.test']);
      expect(stdout.trim()).toBe(expectedA(42));
      await waitFor(() => out.includes('n42.test'), 2000, 'log line');
      expect(out).toMatch(/udp n42\.test A NOERROR\s+[\d.]+ ms conn \d+ reused/);
      // Queries in flight at SIGTERM are still answered.
      const c = await UdpClient.open(port);
      const pending = Array.from({ length: 50 }, (_, i) => c.query(`n${i}.test`, { timeoutMs: 5000 }));
      child.kill('SIGTERM');
      const answers = await Promise.all(pending);
      c.close();
      for (const [i, a] of answers.entries()) expect(firstA(a)).toBe(expectedA(i));
      expect(await exited).toBe(0);
      expect(err).toMatch(/stopped after \d+ queries/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('started by a supervisor that dies (SIGKILL), the proxy stops instead of running on orphaned', async () => {
    // The "supervisor": spawns the proxy with an IPC channel, prints its pid, then waits to be killed.
    const parentScript = [
      "const { spawn } = require('node:child_process');",
      `const c = spawn(process.execPath, [${JSON.stringify(bin)}, '--listen', '127.0.0.1:0', '--no-control', '--resolver', ${JSON.stringify(unbound.resolverArg)}, '--ca', ${JSON.stringify(unbound.pki.caFile)}], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });`,
      'console.log(c.pid);',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const parent = spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => /^\d+\n/.test(out), 5000, 'proxy pid');
    const pid = Number(out.trim());
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      // Kept: the proxy is a separate process on its own clock; half a second shows it does not leave while its parent lives.
      await new Promise((r) => setTimeout(r, 500));
      expect(alive()).toBe(true);
      parent.kill('SIGKILL');
      await waitFor(() => !alive(), 5000, 'orphaned proxy to exit');
    } finally {
      parent.kill('SIGKILL');
      if (alive()) process.kill(pid, 'SIGKILL');
    }
  });

  test('a busy port gets a clear message; bad flags get a clear error and exit 2', async () => {
    const port = await freePort();
    const blocker = await UdpClient.open(port); // binds some other port; occupy `port` explicitly below
    blocker.close();
    const dgram = await import('node:dgram');
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(port, '127.0.0.1', r));
    try {
      const r1 = await runFailing(process.execPath, [bin, '--resolver', unbound.resolverArg, '--listen', `127.0.0.1:${port}`, '--no-control']);
      expect(r1.code).toBe(1);
      expect(r1.stderr).toMatch(/another program is using it/);
      expect(r1.stderr).toMatch(/--listen 127\.0\.0\.1:5300/);
    } finally {
      s.close();
    }
    const r2 = await runFailing(process.execPath, [bin, '--resolver', 'dns.example.com', '--no-control']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/unknown resolver "dns\.example\.com": use a preset/);
    const r3 = await runFailing(process.execPath, [bin, '--resolver', '127.0.0.1:853', '--no-control']);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toMatch(/strict mode needs a way to authenticate/);
  });

  test('port 53 without privileges explains why and how to run unprivileged', async (ctx) => {
    const unprivileged = process.getuid?.() === 0 && fs.existsSync('/usr/bin/setpriv');
    if (!unprivileged) {
      ctx.skip(true, 'needs root and setpriv to run the CLI as an unprivileged user');
    }
    const start = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    if (start <= 53) {
      ctx.skip(true, `this kernel lets anyone bind port 53 (ip_unprivileged_port_start=${start})`);
    }
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-nobody-'));
    fs.chmodSync(home, 0o777);
    const r = await runFailing(
      '/usr/bin/setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, bin, '--resolver', unbound.resolverArg, '--no-control'],
      { ...process.env, HOME: home },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ports below 1024 need root or CAP_NET_BIND_SERVICE/);
    expect(r.stderr).toMatch(/--listen 127\.0\.0\.1:5300/);
  });
});

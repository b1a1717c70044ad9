// A hotel Wi-Fi's sign-in server, for captive-portal tests (run in-process
// through startFakePortal(), or inside a lab namespace as a script).
//
// Until someone POSTs /login, every HTTP request is answered 302 to
// http://LOGIN_HOST[:PORT]/login (the login page itself is a 200 form), the
// way hotspots intercept all web traffic. After the login, /generate_204
// answers 204, and a request for any other host is dropped without an
// answer — as on an honest network, where nothing answers at 192.0.2.1.
// ON_LOGIN (optional) is a shell command run once at the login: in the lab
// it opens the hotspot's firewall.
//
// Script usage: node --import tsx fake-portal.ts HOST PORT LOGIN_HOST [ON_LOGIN]
// prints "READY <port>" once listening and "LOGIN" when signed in.
import { execSync } from 'node:child_process';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import fs from 'node:fs';
import os from 'node:os';
import type { DiscoveryPaths } from '../proxy/network/network-resolver.js';
import { removeOnExit } from './temp.js';
import { freePort } from './unbound.js';
import type { AddressInfo } from 'node:net';

export interface FakePortal {
  readonly port: number;
  signedIn(): boolean;
  /** "GET host/path" per request, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startFakePortal(opts: { host: string; port: number; loginHost: string; onLogin?: () => void }): Promise<FakePortal> {
  let signedIn = false;
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push(`${req.method} ${host}${req.url}`);
    const port = (server.address() as AddressInfo).port;
    const loginUrl = `http://${opts.loginHost}${port === 80 ? '' : `:${port}`}/login`;
    if (req.method === 'POST' && req.url === '/login') {
      req.resume();
      req.on('end', () => {
        if (!signedIn) {
          signedIn = true;
          opts.onLogin?.();
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>You are online</h1>');
      });
      return;
    }
    if (signedIn) {
      if (req.url === '/generate_204') {
        res.writeHead(204).end();
        return;
      }
      // After sign-in the hotspot no longer intercepts: nothing answers for other hosts.
      if (host !== opts.loginHost) {
        req.socket.destroy();
        return;
      }
    }
    if (host === opts.loginHost && req.url === '/login') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<form method="post" action="/login"><button>Accept and connect</button></form>');
      return;
    }
    res.writeHead(302, { location: loginUrl, 'content-type': 'text/html' }).end('<a href="' + loginUrl + '">Sign in</a>');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    signedIn: () => signedIn,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface HotspotDns {
  readonly port: number;
  /** "name TYPE" per query the hotspot's resolver saw. */
  readonly asked: string[];
  stop(): void;
}

/** The hotspot's own resolver: every A query answered with 127.0.0.1 (where the portal listens). */
export async function startHotspotDns(): Promise<HotspotDns> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [path.join(import.meta.dirname, 'lab-dns-server.mjs'), '127.0.0.1', String(port), '127.0.0.1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const asked: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on('line', (l) => {
      if (l.startsWith('Q ')) asked.push(l.slice(2).toLowerCase());
      else resolve();
    });
    child.once('exit', (code) => reject(new Error(`hotspot DNS exited (${code})`)));
    setTimeout(resolve, 1500);
  });
  await ready;
  return { port, asked, stop: () => child.kill('SIGKILL') };
}


/** Discovery paths with nothing in them: a test never reads this machine's leases or resolv.conf. */
export function emptyDiscoveryPaths(): DiscoveryPaths {
  const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-nodiscovery-')));
  return { stateDirs: [dir], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: path.join(dir, 'uplink.conf'), leases: [dir] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [host = '0.0.0.0', port = '80', loginHost = 'login.hotspot.test', onLogin] = process.argv.slice(2);
  const portal = await startFakePortal({
    host,
    port: Number(port),
    loginHost,
    onLogin: () => {
      if (onLogin) execSync(onLogin, { stdio: 'inherit' });
      process.stdout.write('LOGIN\n');
    },
  });
  process.stdout.write(`READY ${portal.port}\n`);
  process.on('SIGTERM', () => void portal.close().then(() => process.exit(0)));
}

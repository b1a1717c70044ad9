/**
 * dotstub started in a network lab's client namespace (netlab.ts) the way
 * the lab tests start it: its own config dir, a control API on a free
 * loopback port, and a ready file to wait on; the control API reached with
 * curl inside the namespace (its loopback is the namespace's own). One place
 * for what the captive-portal, DNS-interception, DDR, network-memory and
 * key-agreement labs each wrote out before: the flags that point it at the
 * lab's resolver, and the first answer after a change of network.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { NetworksView, RememberedNetworkView } from '../proxy/control/api-types.js';
import { dotstubArgv, type Netlab, type NetlabProcess } from './netlab.js';

export interface LabDotstub {
  readonly proc: NetlabProcess;
  /** Its own directory in the lab (config dir, ready file, bodies read back). */
  readonly dir: string;
  /** Its --config-dir (networks.json, settings). */
  readonly configDir: string;
  /** When its ready file appeared (test clock, ms). */
  readonly readyAt: number;
  /** GET a control API route; throws with curl's error when it can't be read. */
  get<T>(route: string): Promise<T>;
  /** PUT or POST a JSON body (with the page's Origin, as the dashboard sends it): the HTTP status and the body. */
  send(method: 'PUT' | 'POST', route: string, body: unknown): Promise<{ readonly code: number; readonly body: string }>;
  /** GET /api/networks. */
  networks(): Promise<NetworksView>;
  /** The network we're on, as GET /api/networks lists it, once `pred` holds (within `ms`). */
  waitForHere(pred: (n: RememberedNetworkView) => boolean, ms: number, what: string): Promise<RememberedNetworkView>;
  stop(): Promise<void>;
}

export interface LabDotstubOptions {
  /** A directory of its own under the lab's (made here); default: a new one under lab.dir. */
  readonly dir?: string;
  /** dotstub's flags besides --control, --config-dir and --ready-file (which this adds). */
  readonly args: readonly string[];
  /**
   * The network checks (portal probes, the DNS-interception and DDR checks)
   * on, as users get them: inside the lab every address they can reach is
   * the lab's own. Default true.
   */
  readonly networkChecks?: boolean;
  readonly readyWithinMs?: number;
  /** Node's own flags before the program (an `--import` of a test's injector: test-support/break-io.mjs). */
  readonly nodeArgs?: readonly string[];
  /** More environment for it. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The flags the network labs start dotstub in the client with: listening on
 * 127.0.0.1:`listenPort`, the lab's DoT resolver (dns.test at the server's
 * IPv4 address, port 853, its certificate trusted through `ca`) in `mode`,
 * and the router as the network's resolver.
 */
export function labClientArgs(lab: Netlab, o: { readonly listenPort: number; readonly ca: string; readonly mode: 'strict' | 'opportunistic' }): string[] {
  const a = lab.addresses;
  return ['--listen', `127.0.0.1:${o.listenPort}`, '--resolver', `${a.server4}:853#dns.test`, '--ca', o.ca, `--${o.mode}`, '--network-dns', a.routerClientSide4];
}

let started = 0;

export async function startLabDotstub(lab: Netlab, o: LabDotstubOptions): Promise<LabDotstub> {
  const dir = o.dir ?? path.join(lab.dir, `dotstub-${started++}`);
  fs.mkdirSync(dir, { recursive: true });
  const readyFile = path.join(dir, 'ready.json');
  const configDir = path.join(dir, 'config');
  const [node, ...program] = dotstubArgv([...o.args, '--control', '127.0.0.1:0', '--config-dir', configDir, '--ready-file', readyFile]);
  const proc = lab.client.spawn([node as string, ...(o.nodeArgs ?? []), ...program], { env: { ...(o.networkChecks === false ? {} : { DOTSTUB_PORTAL_CHECK: 'on' }), ...o.env } });
  const deadline = Date.now() + (o.readyWithinMs ?? 20_000);
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      await proc.stop();
      throw new Error(`dotstub did not start in the lab:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyAt = Date.now();
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { control: string; token: string };
  const auth = `Authorization: Bearer ${ready.token}`;
  const get = async <T>(route: string): Promise<T> => {
    const r = await lab.client.exec(['curl', '-sS', '--max-time', '2', '-H', auth, `${ready.control}${route}`]);
    if (r.code !== 0) throw new Error(`GET ${route}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  let bodies = 0;
  return {
    proc,
    dir,
    configDir,
    readyAt,
    get,
    networks: () => get<NetworksView>('/api/networks'),
    send: async (method, route, body) => {
      const out = path.join(dir, `response-${bodies++}.json`);
      const r = await lab.client.exec([
        'curl', '-sS', '-o', out, '-w', '%{http_code}', '--max-time', '3', '-X', method,
        '-H', auth, '-H', `Origin: ${ready.control}`, '-H', 'Content-Type: application/json',
        '--data', JSON.stringify(body), `${ready.control}${route}`,
      ]);
      return { code: Number(r.stdout), body: fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '' };
    },
    waitForHere: async (pred, ms, what) => {
      const end = Date.now() + ms;
      for (;;) {
        const here = (await get<{ networks: RememberedNetworkView[] }>('/api/networks')).networks.find((n) => n.current);
        if (here && pred(here)) return here;
        if (Date.now() > end) throw new Error(`never ${what} within ${ms} ms; this network: ${JSON.stringify(here)}\ndotstub said:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => proc.stop(),
  };
}

/**
 * Asks `name` A through dotstub on 127.0.0.1:`port` in the client as an
 * application retrying would (every 100 ms, for at most 15 s) until an answer
 * `ok` accepts (default: NOERROR): when it first asked, when that answer
 * came, and the statuses before it.
 */
export async function firstAnswer(
  lab: Netlab,
  d: LabDotstub,
  port: number,
  name: string,
  ok: (status: string, digOutput: string) => boolean = (status) => status === 'NOERROR',
): Promise<{ readonly askedAt: number; readonly answeredAt: number; readonly before: readonly string[] }> {
  const before: string[] = [];
  const askedAt = Date.now();
  while (Date.now() - askedAt < 15_000) {
    const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(port), '+time=10', '+tries=1', '+nocookie', name, 'A']);
    const status = /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER';
    if (ok(status, r.stdout)) return { askedAt, answeredAt: Date.now(), before };
    before.push(status);
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no answer for ${name} in 15 s: ${before.join(', ')}\n${d.proc.output()}`);
}

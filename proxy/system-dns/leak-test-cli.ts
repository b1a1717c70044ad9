/**
 * `dotstub leak-test`: the leak self-test against a running dotstub, which
 * it asks through the control API's query log whether the test name arrived.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runLeakTest } from './leak-test.js';
import { systemHost } from './host.js';
import { detectBackend } from './takeover.js';

export const LEAK_TEST_HELP = `Usage: dotstub leak-test [options]

Resolves a fresh random name through the system (as any program does) and
checks that it reached dotstub; lists every other resolver the system knows.

  --control URL      dotstub's control API, as dotstub printed it (default:
                     ask over the control socket, $DOTSTUB_CONTROL_SOCKET or
                     /run/dotstub/control.sock; no port is guessed, since
                     another program may hold it and would get the token)
  --token-file FILE  with --control: the control token (default: the config
                     dir's token)
  --port N           dotstub's DNS port, for the backend's checks (default 53)
  --root DIR         check copies of the system files under DIR (for tests)
`;

export interface LeakTestCliEnv {
  readonly configDir: string;
  /** The control socket, and a GET on it (the command wires it: the socket's group is the authorization, no token). */
  readonly socket?: { readonly path: string; get(pathname: string): Promise<{ readonly status: number; readonly body: unknown }> };
}

export async function runLeakTestCli(argv: readonly string[], env: LeakTestCliEnv): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { control: { type: 'string' }, 'token-file': { type: 'string' }, port: { type: 'string' }, root: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (err) {
    console.error(`dotstub: ${(err as Error).message}. See dotstub leak-test --help.`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(LEAK_TEST_HELP);
    return 0;
  }
  const port = values.port === undefined ? 53 : Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`dotstub: --port ${values.port ?? ''}: expected a whole number from 1 to 65535`);
    return 2;
  }
  type Records = { records: { name?: string }[] };
  let queries: (name: string) => Promise<Records>;
  if (values.control === undefined) {
    // The token goes to no address that has not shown it is dotstub: the socket needs none.
    const socket = env.socket;
    if (socket === undefined || !fs.existsSync(socket.path)) {
      console.error(`dotstub: no control socket${socket ? ` at ${socket.path}` : ''}: give --control URL, the dashboard's address as dotstub printed it`);
      return 2;
    }
    queries = async (name) => {
      const a = await socket.get(`/api/queries?name=${encodeURIComponent(name)}`);
      if (a.status !== 200) throw new Error(`control socket ${socket.path}: HTTP ${a.status}`);
      return a.body as Records;
    };
  } else {
    const control = values.control;
    const tokenFile = values['token-file'] ?? path.join(env.configDir, 'token');
    let token: string;
    try {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      console.error(`dotstub: cannot read the control token ${tokenFile} (${(err as NodeJS.ErrnoException).code ?? String(err)}): is dotstub running? Give --token-file`);
      return 2;
    }
    queries = async (name) => {
      const url = new URL('/api/queries', control);
      url.searchParams.set('name', name);
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      if (!res.ok) throw new Error(`control API ${url.origin}: HTTP ${res.status}`);
      return (await res.json()) as Records;
    };
  }
  const host = systemHost(values.root ?? '/');
  const result = await runLeakTest({
    arrived: async (name) => (await queries(name)).records.some((r) => r.name?.toLowerCase().replace(/\.$/, '') === name),
    otherResolvers: async () => (await detectBackend(host)).chosen.leaks({ port }),
  }).catch((err: unknown) => {
    console.error(`dotstub: leak test: ${(err as Error).message}`);
    return null;
  });
  if (result === null) return 1;
  for (const l of result.lines) console.log(l);
  return result.passed ? 0 : 1;
}

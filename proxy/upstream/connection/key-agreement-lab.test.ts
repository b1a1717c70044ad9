/**
 * Post-quantum key agreement without a penalty (issue 33, item 4), in the
 * network lab (test-support/netlab.ts). The resolver is a DNS-over-TLS
 * server of our own (test-support/lab-dot-server.mjs) run by this Node, so
 * on the packaged runtime (Node 24, OpenSSL 3.5) it agrees X25519MLKEM768;
 * Debian's unbound is built on OpenSSL 3.0, which has no ML-KEM. dotstub's
 * CLI runs in the client namespace, by the same Node.
 *
 *   home (a clean path)                           → X25519MLKEM768 agreed
 *   the tunnel (the router drops IPv4 packets     → a ClientHello with the library's groups gets no answer
 *     over 1,280 bytes, both ways)                  (a plain TLS client of Node's: the answer this test rests on);
 *                                                   dotstub's first connection sends it, hears nothing for half
 *                                                   the handshake deadline, and opens classical (X25519); the
 *                                                   network's memory keeps it
 *   elsewhere (as lossy)                          → post-quantum first again, and its own fallback
 *   the tunnel again                              → classical at once: answered well within the first-flight wait
 *   home again                                    → X25519MLKEM768 again
 *
 * Without the retry, dotstub's connection to the tunnel's resolver stalls
 * until its handshake deadline, again and again: no answer at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { testPki } from '../../../test-support/certs.js';
import { firstAnswer as firstAnswerOf, startLabDotstub } from '../../../test-support/lab-dotstub.js';
import { netlabMissing, startNetlab, type Netlab, type NetlabProcess } from '../../../test-support/netlab.js';
import { networkJoiner } from '../../../test-support/netlab-join.js';
import { skipWith } from '../../../test-support/skips.js';
import type { ConnectionView } from '../../control/api-types.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { firstFlightWaitMs, offersPostQuantum } from './key-agreement.js';

const missing =
  netlabMissing() ??
  (offersPostQuantum()
    ? null
    : `this runtime's TLS library (OpenSSL ${process.versions.openssl}) offers no post-quantum group; scripts/test.mjs runs this lab on the packaged Node 24`);

const LISTEN_PORT = 5300;
const HOME_MAC = '02:53:00:00:01:01'; // the router's client-side MAC as netlab makes it
const TUNNEL_MAC = '02:53:00:00:12:80';
const ELSEWHERE_MAC = '02:53:00:00:e1:5e';
const FIRST_FLIGHT_WAIT_MS = firstFlightWaitMs(DEFAULT_POOL_OPTIONS.handshakeTimeoutMs);

let lab: Netlab;
let server: NetlabProcess;
const pki = testPki();

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  server = lab.server.spawn([process.execPath, 'test-support/lab-dot-server.mjs', lab.addresses.server4, '853', pki.serverKeyFile, pki.serverCertFile, '192.0.2.53']);
  await server.waitFor(/READY/, 10_000);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await lab?.close();
});

/** A plain TLS client of this Node's in the client namespace: the group agreed, or 'no answer' within `ms`. */
async function probe(groups: string | null, ms = 2_500): Promise<string> {
  const script = `
    const tls = require('node:tls');
    const s = tls.connect({ host: ${JSON.stringify(lab.addresses.server4)}, port: 853, rejectUnauthorized: false ${groups ? `, ecdhCurve: ${JSON.stringify(groups)}` : ''} }, () => {
      console.log('AGREED ' + s.getEphemeralKeyInfo().name); s.destroy();
    });
    s.on('error', (e) => console.log('ERROR ' + e.code));
    setTimeout(() => { console.log('NO ANSWER'); process.exit(0); }, ${ms}).unref();`;
  const r = await lab.client.exec([process.execPath, '-e', script], { timeoutMs: ms + 5_000 });
  return /AGREED (\S+)|(NO ANSWER)|ERROR (\S+)/.exec(r.stdout)?.slice(1).find(Boolean) ?? `nothing (${r.stderr.trim()})`;
}

test(
  'a path that drops packets over 1,280 bytes: the post-quantum ClientHello gets no answer, dotstub opens classical and remembers; a clean path agrees post-quantum',
  { ...skipWith(missing), timeout: 120_000 },
  async () => {
    const a = lab.addresses;
    // The answer the test rests on: on a clean path the library's own offer agrees post-quantum.
    expect(await probe(null)).toBe('X25519MLKEM768');

    const d = await startLabDotstub(lab, { args: ['--listen', `127.0.0.1:${LISTEN_PORT}`, '--resolver', `${a.server4}:853#${pki.authName}`, '--ca', pki.caFile, '--strict'], networkChecks: false });
    onTestFinished(() => d.stop());
    const openConnection = async (ms: number, what: string): Promise<ConnectionView> => {
      const end = Date.now() + ms;
      for (;;) {
        const c = (await d.get<ConnectionView[]>('/api/connections')).find((x) => x.state === 'open');
        if (c) return c;
        if (Date.now() > end) throw new Error(`${what}: no open connection within ${ms} ms\n${d.proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    /** Asks (as an application retrying would) until the first answer from the lab's server: how long after the first ask, and what came before it. */
    const firstAnswer = async (name: string): Promise<{ ms: number; at: number; before: readonly string[] }> => {
      const r = await firstAnswerOf(lab, d, LISTEN_PORT, name, (status, out) => status === 'NOERROR' && out.includes('192.0.2.53'));
      return { ms: r.answeredAt - r.askedAt, at: r.answeredAt, before: r.before };
    };
    const join = networkJoiner(lab);
    const memory = (): Record<string, { pqHelloLost?: { at: string } }> =>
      (JSON.parse(fs.readFileSync(path.join(d.configDir, 'networks.json'), 'utf8')) as { networks: Record<string, { pqHelloLost?: { at: string } }> }).networks;
    const hellos = (): number[] => [...server.output().matchAll(/^HELLO (\d+)$/gm)].map((m) => Number(m[1]));

    // Home, a clean path: post-quantum.
    await firstAnswer('home.test');
    const home = await openConnection(5_000, 'home');
    expect(home).toMatchObject({ keyGroup: 'X25519MLKEM768', classicalOnly: null });
    expect(Math.max(...hellos())).toBeGreaterThan(1280);

    // The tunnel: the router drops every IPv4 packet over 1,280 bytes, both ways.
    const lift = await lab.iptables(['-I', 'FORWARD', '-m', 'length', '--length', '1281:65535', '-j', 'DROP'], 4);
    onTestFinished(() => lift());
    // What the path does to the library's own offer: no answer. A classical offer goes through.
    const heardBefore = hellos().length;
    expect(await probe(null)).toBe('NO ANSWER');
    expect(await probe('X25519:P-256')).toBe('X25519');
    // The server read only the classical ClientHello whole.
    expect(hellos().slice(heardBefore)).toEqual([expect.any(Number)]);
    expect(hellos().at(-1)).toBeLessThanOrEqual(1280);

    const joinedTunnel = await join(TUNNEL_MAC);
    const tunnel = await firstAnswer('tunnel.test');
    const tunnelMs = tunnel.at - joinedTunnel;
    const fellBack = await openConnection(5_000, 'the tunnel');
    expect(fellBack).toMatchObject({ keyGroup: 'X25519', classicalOnly: 'retried' });
    const remembered = Object.values(memory()).filter((e) => e.pqHelloLost);
    expect(remembered).toHaveLength(1);

    // Another network (its path as lossy): it starts post-quantum again, and falls back on its own.
    await join(ELSEWHERE_MAC);
    await firstAnswer('elsewhere.test');
    expect(await openConnection(5_000, 'elsewhere')).toMatchObject({ keyGroup: 'X25519', classicalOnly: 'retried' });
    // The tunnel again: classical from the first ClientHello, no wait.
    const joinedAgain = await join(TUNNEL_MAC);
    const again = await firstAnswer('again.test');
    const againMs = again.at - joinedAgain;
    expect(await openConnection(5_000, 'the tunnel again')).toMatchObject({ keyGroup: 'X25519', classicalOnly: 'network' });

    // Home again, the path clean: post-quantum again.
    await lift();
    await join(HOME_MAC);
    await firstAnswer('home-again.test');
    expect(await openConnection(5_000, 'home again')).toMatchObject({ keyGroup: 'X25519MLKEM768', classicalOnly: null });

    console.log(
      `[key agreement] ClientHellos the server read whole: ${hellos().join(', ')} bytes; the tunnel's first answer ${tunnelMs} ms after joining it (${tunnel.before.length} SERVFAIL before it), first-flight wait ${FIRST_FLIGHT_WAIT_MS} ms; the tunnel again ${againMs} ms after joining (${again.before.length} before it)`,
    );
    // The first visit waits out the first flight once, and its first query is held, not failed; the next is classical at once.
    expect(tunnelMs).toBeGreaterThanOrEqual(FIRST_FLIGHT_WAIT_MS);
    expect(tunnel.before).toEqual([]);
    expect(again.before).toEqual([]);
    expect(againMs).toBeLessThan(FIRST_FLIGHT_WAIT_MS);
  },
);

test(
  'IPv6 with a path MTU of 1,280 and its "packet too big" lost (a tunnel, IPv6 minimum): the post-quantum ClientHello gets no answer, dotstub opens classical over IPv6 and every lookup is answered',
  { ...skipWith(missing), timeout: 120_000 },
  async () => {
    const a = lab.addresses;
    const v6 = lab.server.spawn([process.execPath, 'test-support/lab-dot-server.mjs', a.server6, '853', pki.serverKeyFile, pki.serverCertFile, '192.0.2.66']);
    onTestFinished(() => v6.stop());
    await v6.waitFor(/READY/, 10_000);
    // Every IPv6 packet over 1,280 bytes vanishes in the router, both ways, and no ICMPv6 "packet too big" says so.
    const lift = await lab.iptables(['-I', 'FORWARD', '-m', 'length', '--length', '1281:65535', '-j', 'DROP'], 6);
    onTestFinished(() => lift());
    const d = await startLabDotstub(lab, { args: ['--listen', `127.0.0.1:${LISTEN_PORT}`, '--resolver', `[${a.server6}]:853#${pki.authName}`, '--ca', pki.caFile, '--strict'], networkChecks: false });
    onTestFinished(() => d.stop());
    const first = await firstAnswerOf(lab, d, LISTEN_PORT, 'v6-tunnel.test', (status, out) => status === 'NOERROR' && out.includes('192.0.2.66'));
    const conns = await d.get<ConnectionView[]>('/api/connections');
    const open = conns.find((c) => c.state === 'open');
    expect(open).toMatchObject({ keyGroup: 'X25519', classicalOnly: 'retried' });
    const failed: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), '+time=3', '+tries=1', `n${i}.v6.test`, 'A']);
      if (!/status: NOERROR/.test(r.stdout)) failed.push(`n${i}: ${/status: (\w+)/.exec(r.stdout)?.[1] ?? 'no answer'}`);
    }
    const hellos = [...v6.output().matchAll(/^HELLO (\d+)$/gm)].map((m) => Number(m[1]));
    console.log(`[key agreement, IPv6 1280] first answer ${first.answeredAt - first.askedAt} ms (${first.before.length} SERVFAIL before it); ClientHellos read whole: ${hellos.join(', ')}; ${failed.length} of 10 later lookups failed`);
    expect(first.before).toEqual([]);
    expect(failed).toEqual([]);
    expect(hellos.every((h) => h <= 1280)).toBe(true);
  },
);

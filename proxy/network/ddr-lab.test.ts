/**
 * The network's own encrypted resolver (issue 33, item 5; RFC 9462, DDR) in
 * the network lab (test-support/netlab.ts): dotstub's CLI in the client
 * namespace as users run it (portal checks on), Debian's unbound as the
 * user's chosen resolver in the server namespace (dns.test at 10.53.2.2),
 * and a second unbound as the network's own resolver in the router, on
 * 10.53.1.1: plain DNS on 53, DNS-over-TLS on 853, answering
 * `_dns.resolver.arpa` SVCB from its local data.
 *
 *   honest network  → its designation (dns.lab.test, a certificate from the test CA with IP:10.53.1.1)
 *                     is offered, verified for 10.53.1.1; nothing switches until the user says
 *                     "use it"; then a name only the network's resolver has resolves through dotstub,
 *                     and "ask" goes back to the user's own
 *   forged          → the network's resolver designates dns.test at 10.53.2.2, whose certificate is
 *                     valid (same CA, its own name) but doesn't name 10.53.1.1: refused, not
 *                     offered, and "use it" is a 400
 *   strict mode     → not one port-53 packet while the user allowed nothing on this network
 *
 * Every address exists only inside the lab.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { StatusView } from '../control/api-types.js';
import { leafFrom, testPki } from '../../test-support/certs.js';
import { netlabMissing, startNetlab, unboundIn, type Capture, type DnsPacket, type Netlab } from '../../test-support/netlab.js';
import { labClientArgs, startLabDotstub, type LabDotstub } from '../../test-support/lab-dotstub.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { DDR_NAME } from './ddr.js';

const missing = netlabMissing() ?? unboundMissing();
const LISTEN_PORT = 5300;
/** A name only the network's own resolver has: it resolves through dotstub only once that resolver carries the lookups. */
const ONLY_HERE = 'only-here.lab.test.';

let lab: Netlab;
let chosen: UnboundServer;

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  chosen = await startUnbound({ names: 10, port: 853, launch: unboundIn(lab.server, [lab.addresses.server4]) });
}, 60_000);
afterAll(async () => {
  await chosen?.stop();
  await lab?.close();
});

/** The network's own resolver in the router, designating `svcb` (SVCB RDATA in presentation form) for `_dns.resolver.arpa`. */
async function networkResolver(svcb: string): Promise<UnboundServer> {
  const a = lab.addresses;
  const cert = leafFrom(testPki(), 'lab-resolver', ['dns.lab.test'], [a.routerClientSide4]);
  return startUnbound({
    names: 0,
    port: 853,
    plainPort: 53,
    tls: cert,
    extra: { [ONLY_HERE]: '10.53.1.77' },
    localData: [`${DDR_NAME}. 300 IN SVCB ${svcb}`],
    launch: unboundIn(lab.router, [a.routerClientSide4]),
  });
}

type Run = LabDotstub & {
  status(): Promise<StatusView>;
  put(pathname: string, body: unknown): Promise<{ code: number; body: string }>;
  /** dig through dotstub: the answer's addresses, or the status when none. */
  lookup(name: string): Promise<string>;
};

async function startDotstubInClient(mode: 'strict' | 'opportunistic'): Promise<Run> {
  const d = await startLabDotstub(lab, { args: labClientArgs(lab, { listenPort: LISTEN_PORT, ca: chosen.pki.caFile, mode }) });
  return {
    ...d,
    status: () => d.get<StatusView>('/api/status'),
    put: (pathname, body) => d.send('PUT', pathname, body),
    lookup: async (name) => {
      const r = await lab.client.exec(['dig', '+time=2', '+tries=1', '-p', String(LISTEN_PORT), '@127.0.0.1', name, 'A']);
      const addrs = [...r.stdout.matchAll(/\sIN\s+A\s+([\d.]+)/g)].map((m) => m[1]);
      return addrs.length ? addrs.join(',') : (/status: (\w+)/.exec(r.stdout)?.[1] ?? `no answer: ${r.stdout}${r.stderr}`);
    },
  };
}

const line = (p: DnsPacket): string => `${p.proto} ${p.src}:${p.srcPort} → ${p.dst}:${p.dstPort} ${p.response ? 'answer' : 'query'} ${p.qname ?? ''}`;
/** The DDR query and its answer in a capture. */
const ddrPackets = (packets: readonly DnsPacket[]): DnsPacket[] => packets.filter((p) => p.qname?.toLowerCase() === DDR_NAME);

async function withCapture<T>(f: (cap: Capture) => Promise<T>): Promise<T> {
  const cap = await lab.capture();
  try {
    return await f(cap);
  } finally {
    await cap.stop().catch(() => []);
  }
}

async function waitFor<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`never ${what} within ${ms} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the network's own encrypted resolver (DDR)", skipWith(missing), () => {
  test('an honest designation, verified for the network resolver\'s address: offered, used only once chosen, and left on "ask"', async () => {
    const a = lab.addresses;
    const own = await networkResolver(`1 dns.lab.test. alpn=dot port=853 ipv4hint=${a.routerClientSide4}`);
    try {
      await withCapture(async (cap) => {
        const run = await startDotstubInClient('opportunistic');
        try {
          const here = await run.waitForHere((n) => n.ownResolver !== null, 10_000, 'asked for its own resolver');
          const shownAt = Date.now();
          expect(here.ownResolver).toMatchObject({
            asked: a.routerClientSide4,
            offer: { name: 'dns.lab.test', protocol: 'dot', port: 853, addresses: [a.routerClientSide4], verifiedFor: a.routerClientSide4 },
            rejected: null,
            choice: 'ask',
            inUse: false,
          });
          expect((await run.networks()).ddrCheck).toBe('every-network');
          // Offered, not taken: the user's own resolver still answers, and the network's own name isn't there.
          expect((await run.status()).resolver.id).toBe(`custom:${a.server4}:853`);
          expect(await run.lookup(ONLY_HERE)).toBe('NXDOMAIN');
          // What it rests on: one SVCB query to the network's resolver, and its answer.
          const ddr = ddrPackets(await cap.packets());
          expect(ddr.map((p) => `${p.proto} ${p.response ? `${p.src}→` : `→${p.dst}:${p.dstPort}`}`)).toEqual([`udp →${a.routerClientSide4}:53`, `udp ${a.routerClientSide4}→`]);

          // "Use it on this network".
          const put = await run.put(`/api/networks/${here.key}`, { ownResolver: 'use' });
          expect(put.code, put.body).toBe(200);
          const status = await waitFor(() => run.status(), (s) => s.resolver.id === 'network:dns.lab.test', 5000, 'switched to the network\'s own');
          expect(status.resolver.label).toBe("dns.lab.test (this network's own)");
          expect(await waitFor(() => run.lookup(ONLY_HERE), (v) => v === '10.53.1.77', 5000, `${ONLY_HERE} resolved`)).toBe('10.53.1.77');
          expect((await run.networks()).networks.find((n) => n.current)?.ownResolver).toMatchObject({ choice: 'use', inUse: true });
          // It went over TLS: the capture (port 53) holds nothing but the one question and its answer.
          expect(ddrPackets(await cap.packets())).toHaveLength(2);
          expect((await cap.packets()).filter((p) => p.qname === ONLY_HERE.slice(0, -1))).toEqual([]);

          // "Stop using it here": back to the user's own.
          expect((await run.put(`/api/networks/${here.key}`, { ownResolver: 'ask' })).code).toBe(200);
          await waitFor(() => run.status(), (s) => s.resolver.id === `custom:${a.server4}:853`, 5000, "back on the user's own");
          expect(await waitFor(() => run.lookup(ONLY_HERE), (v) => v === 'NXDOMAIN', 5000, 'the network\'s own name gone')).toBe('NXDOMAIN');
          console.log(`honest designation: offered ${shownAt - run.readyAt} ms after dotstub was ready (${here.ownResolver?.offer?.name}, verified for ${here.ownResolver?.offer?.verifiedFor}); capture:\n  ${ddr.map(line).join('\n  ')}`);
        } finally {
          await run.stop();
        }
      });
    } finally {
      await own.stop();
    }
  }, 60_000);

  test('a forged designation (a valid certificate for its own name, not for the network resolver\'s address): refused, not offered, and "use it" is refused', async () => {
    const a = lab.addresses;
    const own = await networkResolver(`1 dns.test. alpn=dot port=853 ipv4hint=${a.server4}`);
    try {
      const run = await startDotstubInClient('opportunistic');
      try {
        const here = await run.waitForHere((n) => n.ownResolver !== null, 10_000, 'asked for its own resolver');
        expect(here.ownResolver?.offer).toBeNull();
        expect(here.ownResolver?.rejected?.name).toBe('dns.test');
        expect(here.ownResolver?.rejected?.why).toContain(`not valid for ${a.routerClientSide4}`);
        const put = await run.put(`/api/networks/${here.key}`, { ownResolver: 'use' });
        expect(put.code).toBe(400);
        expect(put.body).toContain('nothing was changed');
        expect((await run.status()).resolver.id).toBe(`custom:${a.server4}:853`);
        console.log(`forged designation refused: ${here.ownResolver?.rejected?.why}`);
      } finally {
        await run.stop();
      }
    } finally {
      await own.stop();
    }
  }, 60_000);

  test('strict mode: not one port-53 packet while nothing is allowed on this network; local names allowed, the network is asked and its offer listed', async () => {
    const a = lab.addresses;
    const own = await networkResolver(`1 dns.lab.test. alpn=dot port=853 ipv4hint=${a.routerClientSide4}`);
    try {
      await withCapture(async (cap) => {
        const run = await startDotstubInClient('strict');
        try {
          const remembered = await run.waitForHere((n) => n.worked === 'dot', 10_000, 'remembered (DoT worked)');
          // Time for a question to have gone had it been allowed (the opportunistic run asks within a second).
          await new Promise((r) => setTimeout(r, 3000));
          expect((await run.networks()).ddrCheck).toBe('where-local-names-allowed');
          expect((await run.networks()).networks.find((n) => n.current)?.ownResolver).toBeNull();
          expect((await cap.packets()).map(line), 'port-53 packets in strict mode').toEqual([]);

          // "Allow" local names on this network: the agreement that it sees plain DNS from here; the question goes now.
          const allowedAt = Date.now() / 1000;
          expect((await run.put(`/api/networks/${remembered.key}`, { localNames: 'allow' })).code).toBe(200);
          const here = await run.waitForHere((n) => n.ownResolver !== null, 10_000, 'asked once local names were allowed');
          expect(here.ownResolver?.offer?.verifiedFor).toBe(a.routerClientSide4);
          const packets = await cap.packets();
          expect(packets.filter((p) => p.time < allowedAt).map(line)).toEqual([]);
          expect(ddrPackets(packets)).toHaveLength(2);
          // Offered, not taken, in strict mode too.
          expect((await run.status()).resolver.id).toBe(`custom:${a.server4}:853`);
        } finally {
          await run.stop();
        }
      });
    } finally {
      await own.stop();
    }
  }, 60_000);
});

/**
 * "This network rewrites DNS" (issue 33, item 6) in the network lab
 * (test-support/netlab.ts), with dotstub's CLI in the client namespace as
 * users run it (portal checks on), Debian's unbound serving DoT in the
 * server namespace, and a hotspot in the router: its own resolver on
 * 10.53.1.1:53 (test-support/lab-dns-server.mjs, every name → 10.53.1.1) and,
 * in the rewriting variant, iptables DNAT'ing every UDP and TCP packet to port
 * 53 from the client to it.
 *
 *   rewriting hotspot, opportunistic → GET /api/networks: this network answers DNS for every
 *                                      address (192.0.2.1 answered), the capture holds the
 *                                      probe and 192.0.2.1's "answer"
 *   clean network, opportunistic     → checked, nothing seen; the capture holds the probe, unanswered
 *   rewriting hotspot, strict        → not one port-53 packet until the user allows local names on
 *                                      this network; then the probe, and the verdict
 *
 * Every address exists only inside the lab; 192.0.2.1 and 2001:db8::1 are
 * routed nowhere there (the router has no route out), as on an honest network.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NetworksView, RememberedNetworkView } from '../control/api-types.js';
import { dotstubArgv, netlabMissing, startNetlab, unboundIn, type Capture, type DnsPacket, type Netlab, type NetlabProcess } from '../../test-support/netlab.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { CHECK_NAME } from './dns-interception.js';

const UNBOUND = process.env.UNBOUND_BIN ?? '/usr/sbin/unbound';
const missing = netlabMissing() ?? (fs.existsSync(UNBOUND) ? null : `${UNBOUND} is not installed (apt-get install unbound)`);
const LISTEN_PORT = 5300;

let lab: Netlab;
let unbound: UnboundServer;
let hotspotDns: NetlabProcess;

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  unbound = await startUnbound({ names: 10, port: 853, launch: unboundIn(lab.server, [lab.addresses.server4]) });
  const a = lab.addresses;
  hotspotDns = lab.router.spawn([process.execPath, path.resolve(import.meta.dirname, '../../test-support/lab-dns-server.mjs'), a.routerClientSide4, '53', a.routerClientSide4]);
  await hotspotDns.waitFor('READY');
}, 60_000);
afterAll(async () => {
  await hotspotDns?.stop();
  await unbound?.stop();
  await lab?.close();
});

/** The hotspot answers every DNS packet the client sends, whatever address it was sent to. Returns its removal. */
async function rewritePort53(): Promise<() => Promise<void>> {
  const to = `${lab.addresses.routerClientSide4}:53`;
  const udp = await lab.iptables(['-t', 'nat', '-A', 'PREROUTING', '-i', 'lan0', '-p', 'udp', '--dport', '53', '-j', 'DNAT', '--to-destination', to]);
  const tcp = await lab.iptables(['-t', 'nat', '-A', 'PREROUTING', '-i', 'lan0', '-p', 'tcp', '--dport', '53', '-j', 'DNAT', '--to-destination', to]);
  return async () => {
    await udp();
    await tcp();
  };
}

interface Run {
  /** When dotstub's ready file appeared (test clock, ms). */
  readonly readyAt: number;
  networks(): Promise<NetworksView>;
  /** The network we're on, as GET /api/networks lists it, once `pred` holds (within `ms`). */
  waitForHere(pred: (n: RememberedNetworkView) => boolean, ms: number, what: string): Promise<RememberedNetworkView>;
  put(pathname: string, body: unknown): Promise<number>;
  stop(): Promise<void>;
}

let runs = 0;
async function startDotstubInClient(mode: 'strict' | 'opportunistic'): Promise<Run> {
  const dir = path.join(lab.dir, `rewrites-${runs++}`);
  fs.mkdirSync(dir);
  const readyFile = path.join(dir, 'ready.json');
  const a = lab.addresses;
  const proc = lab.client.spawn(
    dotstubArgv([
      '--listen', `127.0.0.1:${LISTEN_PORT}`,
      '--resolver', `${a.server4}:853#dns.test`,
      '--ca', unbound.pki.caFile,
      `--${mode}`,
      '--network-dns', a.routerClientSide4,
      '--control', '127.0.0.1:0',
      '--config-dir', path.join(dir, 'config'),
      '--ready-file', readyFile,
    ]),
    // The network checks are on inside the lab, as users get them: every address they can reach is the lab's own.
    { env: { DOTSTUB_PORTAL_CHECK: 'on' } },
  );
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || proc.child.exitCode !== null) throw new Error(`dotstub did not start in the lab:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyAt = Date.now();
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { control: string; token: string };
  const networks = async (): Promise<NetworksView> => {
    const r = await lab.client.exec(['curl', '-sS', '--max-time', '2', '-H', `Authorization: Bearer ${ready.token}`, `${ready.control}/api/networks`]);
    if (r.code !== 0) throw new Error(`networks: ${r.stderr}`);
    return JSON.parse(r.stdout) as NetworksView;
  };
  return {
    readyAt,
    networks,
    waitForHere: async (pred, ms, what) => {
      const end = Date.now() + ms;
      for (;;) {
        const here = (await networks()).networks.find((n) => n.current);
        if (here && pred(here)) return here;
        if (Date.now() > end) throw new Error(`never ${what} within ${ms} ms; this network: ${JSON.stringify(here)}\ndotstub said:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    put: async (pathname, body) => {
      const r = await lab.client.exec([
        'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '3', '-X', 'PUT',
        '-H', `Authorization: Bearer ${ready.token}`, '-H', `Origin: ${ready.control}`, '-H', 'Content-Type: application/json',
        '--data', JSON.stringify(body), `${ready.control}${pathname}`,
      ]);
      return Number(r.stdout);
    },
    stop: () => proc.stop(),
  };
}

/** The check's packets in a capture (both ways): its queries, and the answers that came back. */
function probes(packets: readonly DnsPacket[]): { queries: DnsPacket[]; answers: DnsPacket[] } {
  const ours = packets.filter((p) => p.qname === CHECK_NAME);
  return { queries: ours.filter((p) => !p.response), answers: ours.filter((p) => p.response) };
}

const line = (p: DnsPacket): string => `${p.proto} ${p.src}:${p.srcPort} → ${p.dst}:${p.dstPort} ${p.response ? 'answer' : 'query'} ${p.qname ?? ''}`;

async function withCapture<T>(f: (cap: Capture) => Promise<T>): Promise<T> {
  const cap = await lab.capture();
  try {
    return await f(cap);
  } finally {
    await cap.stop().catch(() => []);
  }
}

describe('does this network answer DNS for every address?', skipWith(missing), () => {
  test('a hotspot that DNATs port 53: the network is listed as answering DNS for every address, on the answer 192.0.2.1 gave', async () => {
    const restore = await rewritePort53();
    try {
      await withCapture(async (cap) => {
        const run = await startDotstubInClient('opportunistic');
        try {
          const here = await run.waitForHere((n) => n.rewritesDns !== null, 10_000, 'listed as rewriting DNS');
          const shownAt = Date.now();
          expect(here.rewritesDns).toMatchObject({ asked: '192.0.2.1', answeredWith: `NOERROR with ${lab.addresses.routerClientSide4}` });
          expect(here.dnsCheckedAt).toBe(here.rewritesDns?.seenAt);
          expect((await run.networks()).dnsCheck).toBe('every-network');
          // The capture it rests on: one query to each documentation address, and 192.0.2.1's "answer" (the hotspot's, rewritten).
          const { queries, answers } = probes(await cap.packets());
          expect(queries.map((p) => `${p.proto} ${p.dst}:${p.dstPort}`).sort()).toEqual(['udp 192.0.2.1:53', 'udp 2001:db8::1:53']);
          expect(answers.map((p) => `${p.proto} ${p.src}:${p.srcPort} → ${p.dst}`)).toEqual([`udp 192.0.2.1:53 → ${lab.addresses.client4}`]);
          expect(hotspotDns.output()).toContain(`Q ${CHECK_NAME} A`);
          // Nothing else on port 53: DoT carried the lookups.
          expect((await cap.packets()).filter((p) => p.qname !== CHECK_NAME)).toEqual([]);
          console.log(`rewriting hotspot: listed ${shownAt - run.readyAt} ms after dotstub was ready; ${here.rewritesDns?.asked} answered ${here.rewritesDns?.answeredWith}; capture:\n  ${[...queries, ...answers].map(line).join('\n  ')}`);
        } finally {
          await run.stop();
        }
      });
    } finally {
      await restore();
    }
  }, 60_000);

  test('a clean network: checked, nothing seen, no verdict; the capture holds the probe and no answer', async () => {
    await withCapture(async (cap) => {
      const run = await startDotstubInClient('opportunistic');
      try {
        const here = await run.waitForHere((n) => n.dnsCheckedAt !== null, 10_000, 'checked');
        const shownAt = Date.now();
        expect(here.rewritesDns).toBeNull();
        const { queries, answers } = probes(await cap.packets());
        expect(queries.map((p) => p.dst).sort()).toEqual(['192.0.2.1', '2001:db8::1']);
        expect(answers).toEqual([]);
        console.log(`clean network: listed as checked, no verdict, ${shownAt - run.readyAt} ms after dotstub was ready; capture:\n  ${queries.map(line).join('\n  ')}`);
      } finally {
        await run.stop();
      }
    });
  }, 60_000);

  test('strict mode on the rewriting hotspot: not one port-53 packet until the user allows local names on this network; then the probe, and the verdict', async () => {
    const restore = await rewritePort53();
    try {
      await withCapture(async (cap) => {
        const run = await startDotstubInClient('strict');
        try {
          // Remembered from its first fact (DoT worked), then a while for a check to have run had it been allowed.
          const here = await run.waitForHere((n) => n.worked === 'dot', 10_000, 'remembered (DoT worked)');
          const rememberedAt = Date.now() / 1000;
          await new Promise((r) => setTimeout(r, 3000));
          expect((await run.networks()).dnsCheck).toBe('where-local-names-allowed');
          expect((await run.networks()).networks.find((n) => n.current)).toMatchObject({ dnsCheckedAt: null, rewritesDns: null });
          const before = await cap.packets();
          expect(before.map(line), 'port-53 packets before the user agreed').toEqual([]);

          // "Allow on this network" for its local names: a standing agreement to plain DNS here; the check runs now.
          const allowedAt = Date.now() / 1000;
          expect(await run.put(`/api/networks/${here.key}`, { localNames: 'allow' })).toBe(200);
          const after = await run.waitForHere((n) => n.rewritesDns !== null, 10_000, 'listed as rewriting DNS once allowed');
          expect(after.rewritesDns?.asked).toBe('192.0.2.1');
          const packets = await cap.packets();
          const { queries, answers } = probes(packets);
          expect(queries).toHaveLength(2);
          expect(answers).toHaveLength(1);
          expect(packets.filter((p) => p.time < allowedAt)).toEqual([]);
          expect(packets.filter((p) => p.qname !== CHECK_NAME)).toEqual([]);
          console.log(`strict, rewriting hotspot: 0 port-53 packets from start to local names allowed (${(allowedAt - rememberedAt).toFixed(1)} s after the network was remembered); then:\n  ${[...queries, ...answers].map(line).join('\n  ')}`);
        } finally {
          await run.stop();
        }
      });
    } finally {
      await restore();
    }
  }, 60_000);
});

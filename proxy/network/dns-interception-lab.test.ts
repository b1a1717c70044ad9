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
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { netlabMissing, startNetlab, unboundIn, type Capture, type DnsPacket, type Netlab, type NetlabProcess } from '../../test-support/netlab.js';
import { labClientArgs, startLabDotstub, type LabDotstub } from '../../test-support/lab-dotstub.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { DDR_NAME } from './ddr.js';
import { CHECK_NAME } from './dns-interception.js';

const missing = netlabMissing() ?? unboundMissing();
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

type Run = LabDotstub & { put(pathname: string, body: unknown): Promise<number> };

async function startDotstubInClient(mode: 'strict' | 'opportunistic'): Promise<Run> {
  const d = await startLabDotstub(lab, { args: labClientArgs(lab, { listenPort: LISTEN_PORT, ca: unbound.pki.caFile, mode }) });
  return { ...d, put: async (pathname, body) => (await d.send('PUT', pathname, body)).code };
}

/** The question for the network's own encrypted resolver (network/ddr.ts), to the network's resolver, or its answer. */
const isDdr = (p: DnsPacket): boolean => p.qname === DDR_NAME && (p.dst === lab.addresses.routerClientSide4 || p.src === lab.addresses.routerClientSide4);

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
          // Nothing else on port 53 but the question for the network's own encrypted resolver (ddr.ts, to the network's resolver): DoT carried the lookups.
          expect((await cap.packets()).filter((p) => p.qname !== CHECK_NAME && !isDdr(p))).toEqual([]);
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
          // Allowed here, the network is also asked for its own encrypted resolver (ddr.ts); nothing else.
          expect(packets.filter((p) => p.qname !== CHECK_NAME && !isDdr(p))).toEqual([]);
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

/**
 * A rejoin of a known network where port 853 is blocked starts on what
 * worked there (issue 21, item 3; "Done when": its first private answer
 * without waiting for a connect timeout). In the network lab
 * (test-support/netlab.ts), with Debian's unbound serving DoT (853) and DoH
 * (443) in the server namespace and dotstub's CLI in the client namespace
 * (strict mode, DoH as its fallback, its memory in its config dir):
 *
 *   home  (the router's MAC as the lab made it, 853 open)   → DoT
 *   café  (another gateway MAC, 853 dropped by the router)  → waits DoT's connect timer, then DoH
 *   home again                                              → DoT
 *   café again, its MAC not yet in the ARP table            → DoH at once: well under the connect timer
 *
 * A network is told apart the way dotstub tells it (network-key.ts:
 * the default gateway's MAC from the ARP table, hashed), so a change of
 * network here is what a laptop sees: the gateway's MAC changes (the router
 * takes another one and the client learns it) and an address comes on the
 * interface (which the network watch notices).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { firstAnswer as firstAnswerOf, startLabDotstub } from '../../test-support/lab-dotstub.js';
import { netlabMissing, startNetlab, unboundIn, type Netlab } from '../../test-support/netlab.js';
import { networkJoiner } from '../../test-support/netlab-join.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { DEFAULT_POOL_OPTIONS } from '../upstream/pool/options.js';

const missing = netlabMissing() ?? unboundMissing();

const LISTEN_PORT = 5300;
const HOME_MAC = '02:53:00:00:01:01'; // the router's client-side MAC as netlab makes it
const CAFE_MAC = '02:53:00:00:ca:fe';
const CONNECT_TIMEOUT_MS = DEFAULT_POOL_OPTIONS.connectTimeoutMs;

let lab: Netlab;
let unbound: UnboundServer;

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  unbound = await startUnbound({
    names: 50,
    port: 853,
    dohPort: 443,
    launch: unboundIn(lab.server, [lab.addresses.server4, lab.addresses.server6]),
  });
}, 60_000);
afterAll(async () => {
  await unbound?.stop();
  await lab?.close();
});

interface Status {
  readonly state: string;
  readonly transport: 'dot' | 'doh' | null;
  readonly transportReason: string | null;
  readonly network: { readonly classification: string } | null;
}

test(
  'a rejoin of a network where 853 was dropped: its first private answer comes through DoH at once, not after the connect timer',
  { ...skipWith(missing), timeout: 90_000 },
  async () => {
    const a = lab.addresses;
    const d = await startLabDotstub(lab, {
      args: ['--listen', `127.0.0.1:${LISTEN_PORT}`, '--resolver', `${a.server4}:853#dns.test`, '--doh', 'https://dns.test:443/dns-query', '--ca', unbound.pki.caFile, '--strict'],
      networkChecks: false,
    });
    onTestFinished(() => d.stop());
    const waitFor = async (pred: (s: Status) => boolean, ms: number, what: string): Promise<Status> => {
      const end = Date.now() + ms;
      for (;;) {
        const s = await d.get<Status>('/api/status');
        if (pred(s)) return s;
        if (Date.now() > end) throw new Error(`${what} not within ${ms} ms; last status ${JSON.stringify(s)}\n${d.proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const firstAnswer = (name: string): ReturnType<typeof firstAnswerOf> => firstAnswerOf(lab, d, LISTEN_PORT, name);
    const dig = async (name: string): Promise<{ status: string }> => {
      const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), '+time=10', '+tries=1', '+nocookie', name, 'A']);
      return { status: /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER' };
    };
    const drop853 = async (): Promise<() => Promise<void>> => lab.iptables(['-I', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], 'both');
    const join = networkJoiner(lab);

    // Home: DoT.
    await waitFor((s) => s.transport === 'dot' && s.state === 'private', 10_000, 'private over DoT at home');
    expect((await dig('n1.test')).status).toBe('NOERROR');

    // The café, first time: 853 dropped. The first answer waits out DoT's connect timer, then comes through DoH.
    let lift = await drop853();
    let changedAt = await join(CAFE_MAC);
    const first = await firstAnswer('n2.test');
    const joinMs = first.answeredAt - changedAt;
    const onDoh = await waitFor((s) => s.transport === 'doh', 5000, 'DoH at the café');
    expect(onDoh.transportReason).toBe('port 853 is blocked here; using DNS-over-HTTPS on 443');

    // Remembered, under the café's key only, with nothing identifying but the hashed key and the gateway's address.
    const memory = (): Record<string, { worked?: string; port853?: { kind: string }; label?: string }> =>
      (JSON.parse(fs.readFileSync(path.join(d.configDir, 'networks.json'), 'utf8')) as { networks: Record<string, { worked?: string; port853?: { kind: string } }> }).networks;
    const cafe = Object.entries(memory()).find(([, e]) => e.port853);
    expect(cafe?.[1]).toMatchObject({ worked: 'doh', port853: { kind: 'dropped' }, label: `gateway ${a.routerClientSide4}` });
    expect(cafe?.[0]).toMatch(/^[0-9a-f]{32}$/);

    // Home again: DoT (back from DoH once the no-flapping interval allows).
    await lift();
    await join(HOME_MAC);
    await waitFor((s) => s.transport === 'dot', 20_000, 'back on DoT at home');
    expect(Object.keys(memory())).toHaveLength(2);

    // The café again, as a laptop rejoins it: the gateway's MAC not known at the change (it comes with the first
    // traffic through it). Straight to DoH all the same: the network is known by its MAC within milliseconds.
    lift = await drop853();
    onTestFinished(() => lift());
    changedAt = await join(CAFE_MAC, { arpKnown: false });
    const again = await firstAnswer('n3.test');
    const rejoinMs = again.answeredAt - changedAt;
    console.log(`[network memory] connect timeout ${CONNECT_TIMEOUT_MS} ms; first private answer after joining the café: ${joinMs} ms after the change, ${first.answeredAt - first.askedAt} ms after the first ask (${first.before.length} SERVFAIL before it); after rejoining it: ${rejoinMs} ms after the change, ${again.answeredAt - again.askedAt} ms after the first ask (${again.before.length} before it)`);
    expect(again.before).toEqual([]); // the very first query is answered
    const s = await waitFor((x) => x.transport === 'doh', 5000, 'DoH at the café again');
    expect(s.transportReason).toMatch(/^port 853 was blocked on this network before; using DNS-over-HTTPS on 443 first/);
    expect(joinMs).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS);
    expect(rejoinMs).toBeLessThan(CONNECT_TIMEOUT_MS / 2);
    // Still two networks: nothing was remembered under the gateway's address while its MAC was unknown.
    expect(Object.keys(memory())).toHaveLength(2);

    // DoT is still re-tried in the background on the ladder's schedule (first at 5 s): its failure is seen again, DoH keeps the queries.
    const probed = await waitFor((x) => x.network?.classification === 'NET_DROPPED', 12_000, "the background DoT probe's failure");
    expect(probed).toMatchObject({ transport: 'doh', state: 'private' });
  },
);

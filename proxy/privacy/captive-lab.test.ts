/**
 * A fake hotspot in network namespaces (test-support/netlab.ts), the way a
 * hotel Wi-Fi treats a laptop, with dotstub as users run it (the CLI, in the
 * client namespace, strict or opportunistic):
 *
 *   client (dotstub, dig, curl) ── router = the hotspot ── server (unbound: DoT 853, DoH 443)
 *
 * The hotspot's resolver (in the router) answers every name with the portal's
 * address; every HTTP request from the client, 192.0.2.1 included, is DNAT'ed
 * to its sign-in server (302 to its login page until POST /login); 853 and 443
 * to the outside are dropped — or, in the second variant, intercepted by a
 * TLS server with its own certificate. POST /login opens the firewall.
 *
 * Asserted from the user's side and from a packet capture on the client's
 * interface: `captive` within 5 s of the first connection attempt; the
 * sign-in page's host resolves; every other name gets SERVFAIL at once;
 * cleartext DNS goes only to the hotspot's resolver and only for the allowed
 * names; after POST /login `private` within 10 s, with no cleartext DNS
 * afterwards and no cleartext answer left in the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHotspot as startLabHotspot, type Hotspot } from '../../test-support/hotspot-lab.js';
import { netlabMissing, startNetlab, unboundIn, type DnsPacket, type Netlab, type NetlabProcess } from '../../test-support/netlab.js';
import { labClientArgs, startLabDotstub } from '../../test-support/lab-dotstub.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';
import { DDR_NAME } from '../network/ddr.js';
import { CHECK_NAME } from '../network/dns-interception.js';

const missing = netlabMissing();
const LOGIN = 'login.hotspot.test';
const LISTEN_PORT = 53;

let lab: Netlab;
let unbound: UnboundServer;

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  unbound = await startUnbound({
    port: 853,
    dohPort: 443,
    extra: { [`${LOGIN}.`]: '192.0.2.80', 'news.example.': '192.0.2.81' },
    launch: unboundIn(lab.server, [lab.addresses.server4]),
  });
}, 60_000);
afterAll(async () => {
  await unbound?.stop();
  await lab?.close();
});

interface Status {
  readonly state: string;
  readonly reason: string;
  readonly captive: { readonly portalHost: string; readonly exception: string; readonly detectedBy: string; readonly allowedNames: string[]; readonly letThrough: string[] } | null;
}

interface Run {
  readonly proc: NetlabProcess;
  status(): Promise<Status>;
  post(pathname: string, body: unknown): Promise<number>;
  dig(name: string): Promise<{ status: string; addresses: string[]; ms: number }>;
  waitFor(pred: (s: Status) => boolean, ms: number, what: string): Promise<{ status: Status; at: number }>;
  stop(): Promise<void>;
}

async function startDotstubInClient(mode: 'strict' | 'opportunistic'): Promise<Run> {
  const d = await startLabDotstub(lab, { args: [...labClientArgs(lab, { listenPort: LISTEN_PORT, ca: unbound.pki.caFile, mode }), '--doh', 'https://dns.test:443/dns-query'] });
  const proc = d.proc;
  const status = (): Promise<Status> => d.get<Status>('/api/status');
  return {
    proc,
    status,
    post: async (pathname, body) => (await d.send('POST', pathname, body)).code,
    dig: async (name) => {
      const at = Date.now();
      const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), '+time=5', '+tries=1', '+nocookie', name, 'A']);
      return {
        status: /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER',
        addresses: [...r.stdout.matchAll(/^\S+\s+\d+\s+IN\s+A\s+(\S+)$/gm)].map((m) => m[1] as string),
        ms: Number(/Query time: (\d+) msec/.exec(r.stdout)?.[1] ?? Date.now() - at),
      };
    },
    waitFor: async (pred, ms, what) => {
      const end = Date.now() + ms;
      const seen: string[] = [];
      for (;;) {
        const s = await status();
        if (pred(s)) return { status: s, at: Date.now() };
        seen.push(`${s.state}: ${s.reason}`);
        if (Date.now() > end) throw new Error(`never ${what} within ${ms} ms; states:\n${[...new Set(seen)].join('\n')}\ndotstub said:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => proc.stop(),
  };
}

/** The hotspot (test-support/hotspot-lab.ts) in this file's lab. */
const startHotspot = (variant: 'drop' | 'intercept'): Promise<Hotspot> => startLabHotspot(lab, { variant, loginHost: LOGIN, unbound });

/**
 * Cleartext DNS the client sent: where, and which names. The DNS-interception
 * check's probe (network/dns-interception.ts: the constant name to a
 * documentation address, once per join in opportunistic mode) is no lookup:
 * `checks` counts it apart; so does the question for the network's own
 * encrypted resolver (network/ddr.ts: `_dns.resolver.arpa` to the network's
 * resolver, once per join in opportunistic mode, never in strict mode
 * unless local names were allowed there), `ddr`, by destination.
 */
function cleartextQueries(packets: readonly DnsPacket[]): { to: Set<string>; names: Set<string>; checks: string[]; ddr: string[] } {
  const isCheck = (p: DnsPacket): boolean => p.qname === CHECK_NAME && (p.dst === '192.0.2.1' || p.dst === '2001:db8::1');
  const isDdr = (p: DnsPacket): boolean => p.qname === DDR_NAME;
  const queries = packets.filter((p) => !p.response && p.dstPort === 53);
  const checks = queries.filter(isCheck).map((p) => p.dst);
  const ddr = queries.filter(isDdr).map((p) => p.dst);
  const out = queries.filter((p) => !isCheck(p) && !isDdr(p));
  return { to: new Set(out.map((p) => p.dst)), names: new Set(out.map((p) => (p.qname ?? '').toLowerCase()).filter(Boolean)), checks, ddr };
}

describe('a fake hotspot in namespaces', skipWith(missing), () => {
  for (const variant of ['drop', 'intercept'] as const) {
    test(`${variant === 'drop' ? '853 and 443 dropped' : '853 and 443 intercepted with the hotspot’s own certificate'}: from "can't resolve anything" to signed in and private again, with nothing but the allowed names in cleartext`, async () => {
      const hotspot = await startHotspot(variant);
      const cap = await lab.capture();
      // Strict for interception (a certificate that doesn't verify is refused), opportunistic for the plain block: no click needed.
      const mode = variant === 'intercept' ? 'strict' : 'opportunistic';
      const run = await startDotstubInClient(mode);
      // From dotstub being up (its first connection attempt is under way by then).
      const t0 = Date.now();
      try {
        const captive = await run.waitFor((s) => s.state === 'captive', 8_000, 'captive');
        const detectedMs = captive.at - t0;
        expect(captive.status.captive?.portalHost).toBe(LOGIN);
        if (mode === 'strict') {
          expect(captive.status.captive?.exception).toBe('asking');
          expect((await run.dig(LOGIN)).status).toBe('SERVFAIL');
          // One click: "Allow sign-in".
          expect(await run.post('/api/captive', { action: 'allow', remember: true })).toBe(200);
        }
        expect((await run.status()).captive?.exception).toBe('active');

        // The sign-in page's host resolves (the hotspot's answer)…
        const login = await run.dig(LOGIN);
        expect(login.status).toBe('NOERROR');
        expect(login.addresses).toEqual([lab.addresses.routerClientSide4]);
        // …and nothing else does: SERVFAIL at once.
        const other = await run.dig('news.example');
        expect(other.status).toBe('SERVFAIL');
        // At once, not after a deadline (2.5 s).
        expect(other.ms).toBeLessThan(2000);

        // The user signs in (the form's POST, from the client).
        const signed = await lab.client.exec(['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '3', '--resolve', `${LOGIN}:80:${lab.addresses.routerClientSide4}`, '-X', 'POST', '--data', 'accept=1', `http://${LOGIN}/login`]);
        expect(signed.stdout).toBe('200');
        await hotspot.portal.waitFor('LOGIN');
        const signedAt = Date.now();
        const back = await run.waitFor((s) => s.state === 'private', 10_000, 'private after the sign-in');
        const privateMs = back.at - signedAt;
        const letThrough = captive.status.captive?.allowedNames ?? [];
        const whilePrivate = await cap.packets();
        const privateAt = back.at / 1000;

        // No cleartext answer was cached: the login host now comes from the private resolver.
        const after = await run.dig(LOGIN);
        expect(after.addresses).toEqual(['192.0.2.80']);
        expect((await run.dig('news.example')).addresses).toEqual(['192.0.2.81']);

        const packets = await cap.stop();
        const { to, names, checks, ddr } = cleartextQueries(packets);
        // The interception check: once at start in opportunistic mode (one packet per documentation address); never in strict mode, where no local names were allowed.
        expect(checks.sort()).toEqual(mode === 'opportunistic' ? ['192.0.2.1', '2001:db8::1'] : []);
        // The question for the network's own encrypted resolver: the same rule, to the network's resolver only (a retry at most).
        if (mode === 'opportunistic') expect(ddr.length === 1 || ddr.length === 2, `DDR queries: ${ddr.join(', ')}`).toBe(true);
        expect(ddr.filter((d) => d !== lab.addresses.routerClientSide4)).toEqual([]);
        if (mode === 'strict') expect(ddr).toEqual([]);
        // Cleartext only to the hotspot's resolver, only for allowed names.
        expect([...to]).toEqual([lab.addresses.routerClientSide4]);
        for (const name of names) expect(letThrough, `${name} left in cleartext`).toContain(name);
        expect(names.has(LOGIN)).toBe(true);
        expect(names.has('news.example')).toBe(false);
        // Nothing in cleartext once private (allowing for the status poll's 100 ms step).
        const late = cleartextQueries(packets.filter((p) => p.time > privateAt + 0.2));
        expect([...late.names]).toEqual([]);
        expect(late.ddr).toEqual([]);
        console.log(
          `hotspot (${variant}, ${mode}): captive after ${detectedMs} ms (by ${captive.status.captive?.detectedBy}); ` +
            `let through in cleartext: ${[...names].join(', ')}; private ${privateMs} ms after the sign-in; ` +
            `${whilePrivate.filter((p) => !p.response).length} cleartext queries in all`,
        );
        // Found within the detection's own budget (3 s) after the first failure, with room for a loaded machine.
        expect(detectedMs).toBeLessThan(8_000);
      } finally {
        await run.stop();
        await cap.stop().catch(() => []);
        await hotspot.stop();
      }
    }, 90_000);
  }

  test('strict mode, the portal check on as users get it: not one port-53 packet before "Allow sign-in", across detection, re-probes and a declined question', async () => {
    const hotspot = await startHotspot('drop');
    const cap = await lab.capture();
    const run = await startDotstubInClient('strict');
    try {
      const captive = await run.waitFor((s) => s.state === 'captive', 8_000, 'captive');
      // Found without DNS: the interception probe (HTTP to an address) met the hotspot.
      expect(captive.status.captive?.detectedBy).toBe('interception');
      expect(captive.status.captive?.exception).toBe('asking');
      // The question stands through two re-probes (every 5 s) …
      await new Promise((r) => setTimeout(r, 11_000));
      expect((await run.status()).captive?.exception).toBe('asking');
      // … then the user says "Not now", and a while passes.
      expect(await run.post('/api/captive', { action: 'decline', remember: false })).toBe(200);
      await new Promise((r) => setTimeout(r, 6_000));
      expect((await run.dig(LOGIN)).status).toBe('SERVFAIL');
      const before = cleartextQueries(await cap.packets());
      expect([...before.names], 'names sent in cleartext before consent').toEqual([]);
      expect([...before.to], 'port-53 destinations before consent').toEqual([]);
      expect(before.checks, 'DNS-interception probes in strict mode').toEqual([]);
      expect(before.ddr, 'questions for the network\'s own resolver in strict mode').toEqual([]);

      // Now the user allows it: the sign-in names, and only they, go to the hotspot's resolver.
      const allowedAt = Date.now() / 1000;
      expect(await run.post('/api/captive', { action: 'allow', remember: false })).toBe(200);
      const login = await run.dig(LOGIN);
      expect(login.status).toBe('NOERROR');
      const packets = await cap.stop();
      const all = cleartextQueries(packets);
      expect(all.names.has(LOGIN)).toBe(true);
      expect(packets.filter((p) => !p.response && p.dstPort === 53 && p.time < allowedAt)).toEqual([]);
      console.log(`strict hotspot: captive by ${captive.status.captive?.detectedBy}; 0 port-53 packets in the ${(allowedAt - captive.at / 1000).toFixed(0)} s from detection to consent; after it: ${[...all.names].join(', ')}`);
    } finally {
      await run.stop();
      await cap.stop().catch(() => []);
      await hotspot.stop();
    }
  }, 90_000);
});

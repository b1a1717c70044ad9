/**
 * What a hostile or broken network does to dotstub, in the network lab
 * (test-support/netlab.ts; issue 8, "Tests"): Debian's unbound serves the
 * same zone over DoT (853) and DoH (443) in the server namespace; dotstub
 * runs in the client namespace in strict mode, from its CLI, with DoH as its
 * fallback; the router drops, resets, rejects with ICMP, or redirects port
 * 853 to a TLS server with the wrong certificate, or sends port 53 to a lying
 * resolver. For each: the classification in /api/status, how long it took to
 * decide, what a client (dig) got meanwhile, the fallback to DoH, the return
 * to DoT once the block is lifted, and — from a capture on the client's side
 * of the router — no cleartext DNS leaving at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { dotstubArgv, netlabMissing, startNetlab, unboundIn, waitForListening, type Capture, type Netlab, type NetlabProcess } from '../../test-support/netlab.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';

const missing = netlabMissing() ?? unboundMissing();

const LISTEN_PORT = 5300;

let lab: Netlab;
let unbound: UnboundServer;
let runs = 0;

interface RaceSample {
  readonly winner: string;
  readonly afterMs: number;
  readonly attempts: readonly { readonly address: string; readonly startMs: number; readonly afterMs: number | null; readonly outcome: string }[];
}

interface StatusSample {
  readonly t: number;
  readonly race: RaceSample | null;
  /** network.attempts as `ADDRESS OUTCOME KIND`. */
  readonly attempts: readonly string[];
  readonly state: string;
  readonly transport: 'dot' | 'doh' | null;
  readonly kind: string | null;
  readonly classification: string | null;
  readonly sentence: string | null;
  readonly afterMs: number | null;
  readonly reason: string;
}

interface Answer {
  /** ms from the test's clock: when dig started and how long dig says the query took. */
  readonly at: number;
  readonly status: string;
  readonly addresses: string[];
  readonly ms: number;
}

interface Dotstub {
  readonly process: NetlabProcess;
  api(what: string): Promise<unknown>;
  readonly started: number;
  status(): Promise<StatusSample>;
  /** Samples /api/status every ~100 ms until `until` holds (or `ms` passes); returns the samples. */
  watch(until: (s: StatusSample) => boolean, ms: number): Promise<StatusSample[]>;
  dig(name: string, timeoutS?: number): Promise<Answer>;
}

beforeAll(async () => {
  if (missing) return;
  lab = await startNetlab();
  unbound = await startUnbound({
    names: 300,
    port: 853,
    dohPort: 443,
    extra: { 'who.test.': '192.0.2.77' },
    launch: unboundIn(lab.server, [lab.addresses.server4, lab.addresses.server6]),
  });
});
afterAll(async () => {
  await unbound?.stop();
  await lab?.close();
});

async function startDotstubInClient(args: readonly string[] = [], resolver = `${lab.addresses.server4}:853#dns.test`): Promise<Dotstub> {
  const n = runs++;
  const configDir = path.join(lab.dir, `config-${n}`);
  const readyFile = path.join(lab.dir, `ready-${n}.json`);
  const proc = lab.client.spawn(
    dotstubArgv([
      '--listen',
      `127.0.0.1:${LISTEN_PORT}`,
      '--resolver',
      resolver,
      '--doh',
      'https://dns.test:443/dns-query',
      '--ca',
      unbound.pki.caFile,
      '--strict',
      '--control',
      '127.0.0.1:0',
      '--config-dir',
      configDir,
      '--ready-file',
      readyFile,
      ...args,
    ]),
  );
  onTestFinished(() => proc.stop());
  const started = Date.now();
  const deadline = started + 20_000;
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || proc.child.exitCode !== null) throw new Error(`dotstub did not start in the lab:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { control: string; token: string };
  const api = async (what: string): Promise<unknown> => {
    const r = await lab.client.exec(['curl', '-sS', '--max-time', '2', '-H', `Authorization: Bearer ${ready.token}`, `${ready.control}/api/${what}`]);
    if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const status = async (): Promise<StatusSample> => {
    const s = (await api('status')) as {
      state: string;
      reason: string;
      transport: 'dot' | 'doh' | null;
      network: { kind: string; classification: string; sentence: string; afterMs: number; attempts: readonly { address: string; kind: string | null; outcome: string }[] } | null;
      race: RaceSample | null;
    };
    return {
      race: s.race,
      attempts: s.network?.attempts.map((t) => `${t.address} ${t.outcome} ${String(t.kind)}`) ?? [],
      t: Date.now(),
      state: s.state,
      reason: s.reason,
      transport: s.transport,
      kind: s.network?.kind ?? null,
      classification: s.network?.classification ?? null,
      sentence: s.network?.sentence ?? null,
      afterMs: s.network?.afterMs ?? null,
    };
  };
  return {
    process: proc,
    api,
    started,
    status,
    watch: async (until, ms) => {
      const samples: StatusSample[] = [];
      const end = Date.now() + ms;
      for (;;) {
        const s = await status();
        samples.push(s);
        if (until(s) || Date.now() > end) return samples;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    dig: async (name, timeoutS = 5) => {
      const at = Date.now();
      const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), `+time=${timeoutS}`, '+tries=1', '+nocookie', name, 'A']);
      const status = /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER';
      const addresses = [...r.stdout.matchAll(/^\S+\s+\d+\s+IN\s+A\s+(\S+)$/gm)].map((m) => m[1] as string);
      const ms = Number(/Query time: (\d+) msec/.exec(r.stdout)?.[1] ?? Date.now() - at);
      return { at, status, addresses, ms };
    },
  };
}

async function block(rule: readonly string[], nat = false): Promise<() => Promise<void>> {
  const remove = await lab.iptables(nat ? ['-t', 'nat', ...rule] : rule, nat ? 4 : 'both');
  onTestFinished(remove);
  return remove;
}

async function captureAll(): Promise<Capture> {
  const cap = await lab.capture();
  onTestFinished(async () => {
    await cap.stop();
  });
  return cap;
}

/** The first sample where `pred` holds, or a failure that shows the whole timeline. */
function firstWhere(d: Dotstub, samples: readonly StatusSample[], pred: (s: StatusSample) => boolean, what: string): StatusSample {
  const hit = samples.find(pred);
  if (!hit) {
    const lines = samples.map((s) => `${s.t - d.started} ms: ${s.state} ${String(s.transport)} ${String(s.classification)} ${s.reason}`);
    throw new Error(`never ${what}; timeline:\n${lines.join('\n')}\ndotstub said:\n${d.process.output()}`);
  }
  return hit;
}

/** Per failure kind: what was decided and how fast (printed for the table). */
const decisions: string[] = [];
afterAll(() => {
  if (decisions.length) console.log(`decision times (this run):\n${decisions.join('\n')}`);
});

interface BlockCase {
  readonly name: string;
  readonly rule: readonly string[];
  readonly kind: string;
  readonly classification: string;
  /**
   * The proxy's own measure of the failed attempt, ms: [min, max]. The lower
   * bound is behaviour (a timer had to run out first; load only delays); the
   * upper bound only says the decision came from the right cause, before
   * the next timer that would also have decided it (the 2.5 s connect timer
   * for the kinds decided at once), with room for a loaded 2-core machine.
   * How fast each decision is, is bench:interference's figure, not a test's.
   */
  readonly decideMs: readonly [number, number];
  /** The first query's answer came through DoH within this long. */
  readonly answeredWithinMs: number;
  /** Race both of the resolver's addresses (IPv6 first); else IPv4 only. */
  readonly dualStack: boolean;
}

/*
 * The ICMP cases race IPv4 only. Over IPv6 the lab shows Linux deciding an
 * ICMPv6 unreachable only at the SYN's retransmit, 1 s later: on a veth the
 * error comes back within microseconds, while connect() still holds the
 * socket, and the kernel keeps it as a soft error (tcp_v6_err: sk_err_soft
 * when sock_owned_by_user). Over a real path the ICMP arrives after connect()
 * has returned and is decided at once, as IPv4's is here.
 */

const blocks: BlockCase[] = [
  // Dropped: IPv6's 2.5 s connect timer, IPv4's started 250 ms later: decided at about 2.75 s.
  { name: '853 dropped', rule: ['-j', 'DROP'], kind: 'dropped', classification: 'NET_DROPPED', decideMs: [2700, 5500], answeredWithinMs: 6000, dualStack: true },
  {
    name: '853 reset',
    rule: ['-j', 'REJECT', '--reject-with', 'tcp-reset'],
    kind: 'refused',
    classification: 'NET_REFUSED',
    decideMs: [0, 2400],
    answeredWithinMs: 2400,
    dualStack: true,
  },
  {
    name: '853 ICMP port unreachable',
    rule: ['-j', 'REJECT', '--reject-with', 'icmp-port-unreachable'],
    kind: 'refused',
    classification: 'NET_REFUSED',
    decideMs: [0, 2400],
    answeredWithinMs: 2400,
    dualStack: false,
  },
  {
    name: '853 ICMP host unreachable',
    rule: ['-j', 'REJECT', '--reject-with', 'icmp-host-unreachable'],
    kind: 'unreachable',
    classification: 'NET_UNREACHABLE',
    decideMs: [0, 2400],
    answeredWithinMs: 2400,
    dualStack: false,
  },
  // An SNI filter: the ClientHello names dns.test, and the router answers it with a reset.
  {
    name: 'SNI filter resets the hello',
    rule: ['-m', 'string', '--string', 'dns.test', '--algo', 'bm', '-j', 'REJECT', '--reject-with', 'tcp-reset'],
    kind: 'reset-after-hello',
    classification: 'NET_RESET_AFTER_HELLO',
    decideMs: [0, 2400],
    answeredWithinMs: 2400,
    dualStack: true,
  },
  // A filter that swallows the ClientHello: TCP connects, the handshake never ends (the 3 s handshake timer).
  {
    name: 'SNI filter drops the hello',
    rule: ['-m', 'string', '--string', 'dns.test', '--algo', 'bm', '-j', 'DROP'],
    kind: 'handshake-stall',
    classification: 'NET_HANDSHAKE_STALL',
    decideMs: [2900, 6000],
    answeredWithinMs: 6000,
    dualStack: false,
  },
];

for (const c of blocks) {
  test(`${c.name}: classified ${c.kind}, DoH answers meanwhile, back to DoT once lifted, nothing in cleartext`, skipWith(missing), async () => {
    const cap = await captureAll();
    // ICMP REJECT needs its IPv6 twin: ip6tables names them icmp6-*.
    const v4 = await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', ...c.rule], 4);
    const v6 = await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', ...c.rule.map((w) => w.replace(/^icmp-port-unreachable$/, 'icmp6-port-unreachable').replace(/^icmp-host-unreachable$/, 'icmp6-addr-unreachable'))], 6);
    onTestFinished(v4);
    onTestFinished(v6);
    // The block is real: a DoT client on the client's side can't get through.
    const direct = await lab.client.exec(['kdig', `@${lab.addresses.server4}`, '-p', '853', '+tls', `+tls-ca=${unbound.pki.caFile}`, '+tls-hostname=dns.test', '+time=1', '+retry=0', '+short', 'who.test']);
    expect(direct.stdout.trim()).toBe('');

    // Both of the resolver's addresses, raced IPv6 first: the block hits both families.
    const d = await startDotstubInClient([], c.dualStack ? `${lab.addresses.server4},[${lab.addresses.server6}]:853#dns.test` : `${lab.addresses.server4}:853#dns.test`);
    // What a client gets while dotstub decides: the right answer, through DoH.
    const first = await d.dig('who.test');
    expect(first).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.77'] });
    expect(first.ms).toBeLessThan(c.answeredWithinMs);
    const onDoh = firstWhere(d, await d.watch((s) => s.transport === 'doh' && s.kind !== null, 5000), (s) => s.transport === 'doh' && s.kind !== null, 'on DoH with a classification');
    expect(onDoh).toMatchObject({ state: 'private', kind: c.kind, classification: c.classification });
    expect(onDoh.afterMs).toBeGreaterThanOrEqual(c.decideMs[0]);
    expect(onDoh.afterMs).toBeLessThanOrEqual(c.decideMs[1]);
    expect(onDoh.reason).toMatch(/DNS-over-HTTPS/);
    const raced = c.dualStack ? [lab.addresses.server6, lab.addresses.server4] : [lab.addresses.server4];
    expect(onDoh.attempts).toEqual(raced.map((addr) => `${addr} failed ${c.kind}`));
    decisions.push(`${c.name.padEnd(28)} ${c.classification.padEnd(16)} decided in ${String(onDoh.afterMs).padStart(5)} ms; first query answered via DoH in ${first.ms} ms`);

    const liftedAt = Date.now();
    await v4();
    await v6();
    const back = firstWhere(d, await d.watch((s) => s.transport === 'dot', 16_000), (s) => s.transport === 'dot', 'back on DoT');
    expect(back.t - liftedAt).toBeLessThan(15_000);
    expect(back.classification).toBeNull();
    expect(await d.dig('n1.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.2'] });
    decisions.push(`${''.padEnd(28)} back on DoT ${back.t - liftedAt} ms after the block was lifted`);

    expect(await cap.stop()).toEqual([]);
  });
}

test('853 redirected to a TLS server with the wrong certificate: interception named with its issuer, no fallback, SERVFAIL at once, back once lifted', skipWith(missing), async () => {
  const key = path.join(lab.dir, 'impostor.key');
  const cert = path.join(lab.dir, 'impostor.pem');
  fs.writeFileSync(key, unbound.pki.impostorKey);
  fs.writeFileSync(cert, unbound.pki.impostorCert);
  const impostor = lab.server.spawn(['openssl', 's_server', '-quiet', '-accept', `${lab.addresses.serverAlt4}:853`, '-cert', cert, '-key', key]);
  onTestFinished(() => impostor.stop());
  await waitForListening(lab.server, [853]);
  const cap = await captureAll();
  const lift = await block(['-A', 'PREROUTING', '-p', 'tcp', '--dport', '853', '-j', 'DNAT', '--to-destination', `${lab.addresses.serverAlt4}:853`], true);

  const d = await startDotstubInClient();
  const decided = firstWhere(d, await d.watch((s) => s.kind !== null, 5000), (s) => s.kind !== null, 'classified');
  expect(decided).toMatchObject({ state: 'blocked', transport: null, kind: 'intercepted', classification: 'NET_INTERCEPTED' });
  // The sentence names who issued the impostor's certificate (certs.ts: "evil test CA").
  expect(decided.sentence).toMatch(/intercepting.*issued by .*evil test CA/);
  // Strict: never around interception through a weaker path, and the client hears so at once.
  const meanwhile = await d.dig('who.test');
  expect(meanwhile.status).toBe('SERVFAIL');
  // At once: not after waiting out a deadline (2.5 s).
  expect(meanwhile.ms).toBeLessThan(2000);
  const still = await d.status();
  expect(still.transport).toBeNull();
  decisions.push(`${'853 to a wrong certificate'.padEnd(28)} ${'NET_INTERCEPTED'.padEnd(16)} decided in ${String(decided.afterMs).padStart(5)} ms; queries meanwhile: SERVFAIL in ${meanwhile.ms} ms (strict: no DoH)`);

  const liftedAt = Date.now();
  await lift();
  const back = firstWhere(d, await d.watch((s) => s.transport === 'dot', 16_000), (s) => s.transport === 'dot', 'back on DoT');
  expect(back.t - liftedAt).toBeLessThan(15_000);
  expect(await d.dig('n1.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.2'] });
  decisions.push(`${''.padEnd(28)} back on DoT ${back.t - liftedAt} ms after the redirect was lifted`);
  expect(await cap.stop()).toEqual([]);
});

test('port 53 hijacked to a lying resolver: strict dotstub never asks it; answers stay right', skipWith(missing), async () => {
  const liar = lab.server.spawn([process.execPath, path.resolve(import.meta.dirname, '../../test-support/lab-dns-server.mjs'), lab.addresses.serverAlt4, '53', '10.66.6.6']);
  onTestFinished(() => liar.stop());
  await liar.waitFor('READY');
  await block(['-A', 'PREROUTING', '-p', 'udp', '--dport', '53', '-j', 'DNAT', '--to-destination', `${lab.addresses.serverAlt4}:53`], true);
  await block(['-A', 'PREROUTING', '-p', 'tcp', '--dport', '53', '-j', 'DNAT', '--to-destination', `${lab.addresses.serverAlt4}:53`], true);
  // The hijack is real: plain DNS to the resolver's address gets the liar's answer.
  const plain = await lab.client.exec(['dig', `@${lab.addresses.server4}`, '+short', '+time=2', '+tries=1', 'who.test']);
  expect(plain.stdout.trim()).toBe('10.66.6.6');
  const askedBefore = liar.output().split('\n').filter((l) => l.startsWith('Q ')).length;

  const cap = await captureAll();
  const d = await startDotstubInClient();
  for (const [name, want] of [['who.test', '192.0.2.77'], ['n5.test', '192.0.2.6']] as const) {
    expect(await d.dig(name)).toMatchObject({ status: 'NOERROR', addresses: [want] });
  }
  expect(await d.status()).toMatchObject({ state: 'private', transport: 'dot' });
  expect(liar.output().split('\n').filter((l) => l.startsWith('Q ')).length).toBe(askedBefore);
  expect(await cap.stop()).toEqual([]);
});

test('35 s of resets on 853 and 443, then the path back: a correct answer within seconds (a retry a second, not a long back-off), SERVFAIL (never silence) meanwhile', skipWith(missing), async () => {
  const d = await startDotstubInClient();
  expect(await d.dig('who.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.77'] });
  const cap = await captureAll();
  const reset = ['-j', 'REJECT', '--reject-with', 'tcp-reset'];
  const lift853 = await block(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', ...reset]);
  const lift443 = await block(['-A', 'FORWARD', '-p', 'tcp', '--dport', '443', ...reset]);
  // The open connection dies with the path (a reset on its next packet, as a middlebox that starts blocking mid-session does).
  const blockedAt = Date.now();
  let i = 0;
  const during: Answer[] = [];
  while (Date.now() - blockedAt < 35_000) {
    during.push(await d.dig(`n${10 + i++}.test`, 3));
    await new Promise((r) => setTimeout(r, 500));
  }
  await lift853();
  await lift443();
  const liftedAt = Date.now();
  let answer: Answer | undefined;
  while (Date.now() - liftedAt < 10_000) {
    const a = await d.dig(`n${10 + i++}.test`, 3);
    if (a.status === 'NOERROR' && a.addresses.length === 1) {
      answer = a;
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(answer, 'no correct answer within 10 s of the path coming back').toBeDefined();
  const recovery = (answer?.at ?? 0) + (answer?.ms ?? 0) - liftedAt;
  const servfails = during.filter((a) => a.status === 'SERVFAIL').length;
  decisions.push(`recovery after 35 s of resets: correct answer ${recovery} ms after the path came back; during the outage ${servfails}/${during.length} SERVFAIL, ${during.filter((a) => a.status === 'NO ANSWER').length} unanswered, slowest ${Math.max(...during.map((a) => a.ms))} ms`);
  // About a second here when idle (bench:interference times it); the bound only rules out waiting for a long back-off.
  expect(recovery).toBeLessThan(4000);
  // Never silence: every query during the outage got a reply (SERVFAIL, or an answer while a connection still lived).
  expect(during.every((a) => a.status !== 'NO ANSWER')).toBe(true);
  expect(await cap.stop()).toEqual([]);
});

test('Happy Eyeballs: IPv6 dropped, IPv4 wins about 250 ms later (not after the 2.5 s timer); the race is in the status', skipWith(missing), async () => {
  const a = lab.addresses;
  const both = `${a.server4},[${a.server6}]:853#dns.test`;
  const cap = await captureAll();
  // Both work: IPv6 is tried first and wins alone.
  const d6 = await startDotstubInClient([], both);
  expect(await d6.dig('n2.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.3'] });
  expect(JSON.stringify(await d6.api('connections'))).toContain(a.server6);
  expect((await d6.status()).race).toBeNull();
  await d6.process.stop();

  onTestFinished(await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], 6));
  const d = await startDotstubInClient([], both);
  const won = firstWhere(d, await d.watch((s) => s.race !== null, 3000), (s) => s.race !== null, 'a race won');
  expect(won.transport).toBe('dot');
  const race = won.race as RaceSample;
  expect(race.winner).toBe(a.server4);
  // IPv4 starts 250 ms in (RFC 8305) and wins before IPv6's 2.5 s connect timer would have let it.
  expect(race.afterMs).toBeGreaterThanOrEqual(250);
  expect(race.afterMs).toBeLessThan(2500);
  expect(race.attempts.map((t) => [t.address, t.outcome])).toEqual([
    [a.server6, 'abandoned'],
    [a.server4, 'won'],
  ]);
  expect(race.attempts[1]?.startMs).toBeGreaterThanOrEqual(250);
  expect(race.attempts[1]?.startMs).toBeLessThan(2500);
  expect(await d.dig('n3.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.4'] });
  decisions.push(`${'Happy Eyeballs, v6 dropped'.padEnd(28)} ${'(v4 won)'.padEnd(16)} connected in ${String(race.afterMs).padStart(5)} ms (v4 started at ${race.attempts[1]?.startMs} ms)`);
  expect(await cap.stop()).toEqual([]);
});

test('853 dropped mid-session, queries flowing: answered through DoH within seconds of the block, never silence', skipWith(missing), async () => {
  const d = await startDotstubInClient([], `${lab.addresses.server4},[${lab.addresses.server6}]:853#dns.test`);
  expect(await d.dig('who.test')).toMatchObject({ status: 'NOERROR', addresses: ['192.0.2.77'] });
  expect((await d.status()).transport).toBe('dot');
  const cap = await captureAll();
  await block(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP']);
  await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], 6).then((r) => onTestFinished(r));
  const blockedAt = Date.now();
  const answers: Answer[] = [];
  let i = 0;
  while (Date.now() - blockedAt < 6000) {
    answers.push(await d.dig(`n${200 + i++}.test`, 4));
    await new Promise((r) => setTimeout(r, 200));
  }
  const firstRight = answers.find((a) => a.status === 'NOERROR' && a.addresses.length === 1);
  const servfails = answers.filter((a) => a.status === 'SERVFAIL');
  const s = await d.status();
  decisions.push(
    `${'853 dropped mid-session'.padEnd(28)} ${String(s.classification).padEnd(16)} answered via DoH ${firstRight ? firstRight.at + firstRight.ms - blockedAt : '–'} ms after the block; ${servfails.length}/${answers.length} SERVFAIL meanwhile`,
  );
  expect(s).toMatchObject({ transport: 'doh', state: 'private' });
  expect(firstRight).toBeDefined();
  // Through DoH well within the 6 s of queries (the time it takes is bench:interference's figure).
  expect((firstRight?.at ?? 0) + (firstRight?.ms ?? 0) - blockedAt).toBeLessThan(5500);
  expect(answers.every((a) => a.status !== 'NO ANSWER')).toBe(true);
  expect(await cap.stop()).toEqual([]);
});

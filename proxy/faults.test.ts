/**
 * The proxy against our fault-injecting DoT server: the cases unbound can't
 * produce on demand. Everything a client sees goes through real sockets.
 */
import { describe, expect, onTestFinished, test } from 'vitest';
import dnsPacket from 'dns-packet';
import { expectedA, firstA, TcpClient, UdpClient } from '../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../test-support/fault-server.js';
import { startProxy, waitFor, waitForEvent, waitForState, type Harness } from '../test-support/proxy-harness.js';
import { testPki } from '../test-support/certs.js';
import type { ConnectionEvent, StateChange } from './dotstub.js';
import type { QueryRecord } from './engine/query-record.js';
import { DEFAULT_POOL_OPTIONS } from './upstream/pool/options.js';

async function server(opts: Parameters<typeof startFaultServer>[0] = {}): Promise<FaultServer> {
  const s = await startFaultServer(opts);
  onTestFinished(() => s.stop());
  return s;
}

async function proxyFor(s: FaultServer, opts: Partial<Parameters<typeof startProxy>[0]> = {}): Promise<Harness> {
  const h = await startProxy({ resolverArg: s.resolverArg, ...opts });
  onTestFinished(() => h.stop());
  return h;
}

async function udp(port: number): Promise<UdpClient> {
  const c = await UdpClient.open(port);
  onTestFinished(() => c.close());
  return c;
}

function events(h: Harness): { connections: ConnectionEvent[]; states: StateChange[] } {
  const out = { connections: [] as ConnectionEvent[], states: [] as StateChange[] };
  h.proxy.on('connection', (e) => out.connections.push(e));
  h.proxy.on('state', (e) => out.states.push(e));
  return out;
}

describe('pipelining and out-of-order answers', () => {
  test('a slow name does not delay fast names behind it on the same connection', async () => {
    const s = await server();
    s.behaviour.delays.set('q0.slow.test', 600);
    const h = await proxyFor(s);
    await waitForState(h.proxy, 'private', 5000);
    const tcp = await TcpClient.open(h.port);
    onTestFinished(() => tcp.close());
    const slow = tcp.query('q0.slow.test');
    let slowAnswered = false;
    void slow.then(() => (slowAnswered = true));
    await new Promise((r) => setTimeout(r, 20));
    const fast = await Promise.all(Array.from({ length: 20 }, (_, i) => tcp.query(`q${i + 1}.fast.test`)));
    // Every fast answer arrived before the slow one, asked first, did: no head-of-line blocking.
    expect(slowAnswered).toBe(false);
    for (const [i, a] of fast.entries()) {
      expect(a.rcode).toBe('NOERROR');
      expect(firstA(a)).toBe(expectedA(i + 1));
    }
    const s0 = await slow;
    expect(firstA(s0)).toBe(expectedA(0));
    expect(s0.ms).toBeGreaterThanOrEqual(550);
    // One TLS connection carried them all, and the proxy saw the reordering.
    expect(s.connections).toBe(1);
    expect(h.proxy.counters.outOfOrder).toBeGreaterThanOrEqual(1);
    // The TCP client itself got its answers out of order (RFC 7766 §6.2.1.1).
    expect(tcp.arrivals.at(-1)).not.toBe(tcp.arrivals[0]);
  });

  test('a pool of two connections opens both at start; a burst fills the first one\'s window and the rest goes to the second', async () => {
    const s = await server();
    for (let i = 0; i < 40; i++) s.behaviour.delays.set(`q${i}.pool.test`, 50);
    const h = await proxyFor(s, { pool: { size: 2 } });
    await waitForEvent(h.proxy, 'connection', () => h.proxy.connections().filter((c) => c.state === 'open').length === 2, 5000, 'two open connections');
    const c = await udp(h.port);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.query(`q${i}.pool.test`)));
    for (const [i, a] of answers.entries()) expect(firstA(a)).toBe(expectedA(i));
    const perConnection = new Map<number, number>();
    for (const q of s.seen) perConnection.set(q.connection, (perConnection.get(q.connection) ?? 0) + 1);
    // 26 answers of 468 octets fit in the first connection's initial window (answers are assumed padded until one is seen).
    expect([...perConnection.values()].sort((a, b) => b - a)).toEqual([26, 14]);
    expect(h.proxy.counters.connectionHits).toBe(40);
  });

  test('two clients using the same message ID each get their own answer', async () => {
    const s = await server();
    s.behaviour.delays.set('q1.a.test', 100);
    const h = await proxyFor(s);
    const a = await udp(h.port);
    const b = await udp(h.port);
    const [ra, rb] = await Promise.all([a.query('q1.a.test', { id: 4242 }), b.query('q2.b.test', { id: 4242 })]);
    expect(ra.packet.id).toBe(4242);
    expect(rb.packet.id).toBe(4242);
    expect(ra.packet.questions?.[0]?.name).toBe('q1.a.test');
    expect(firstA(ra)).toBe(expectedA(1));
    expect(rb.packet.questions?.[0]?.name).toBe('q2.b.test');
    expect(firstA(rb)).toBe(expectedA(2));
    // The resolver never saw the clients' ID, and saw two distinct IDs.
    const ids = s.seen.filter((q) => q.name.startsWith('q1.a') || q.name.startsWith('q2.b')).map((q) => q.id);
    expect(new Set(ids).size).toBe(2);
  });

  test('an answer with the wrong question is dropped and counted; the client gets SERVFAIL, never that answer', async () => {
    const s = await server();
    s.behaviour.wrongQuestion.add('q7.evil.test');
    const h = await proxyFor(s, { pool: { queryTimeoutMinMs: 200, queryTimeoutMaxMs: 300 } });
    const c = await udp(h.port);
    const ok = await c.query('q8.fine.test');
    expect(firstA(ok)).toBe(expectedA(8));
    const bad = await c.query('q7.evil.test');
    expect(bad.rcode).toBe('SERVFAIL');
    expect(bad.packet.answers ?? []).toHaveLength(0);
    expect(bad.packet.questions?.[0]?.name).toBe('q7.evil.test');
    expect(h.proxy.counters.mismatches).toBeGreaterThanOrEqual(1);
  });
});

describe('nothing lost', () => {
  // Issue 42: 300 (it was 500): one client's share is three quarters of what the pool carries at once, now 4 connections × 100.
  test('a reset with 300 queries in flight: all 300 are answered', async () => {
    const s = await server();
    const h = await proxyFor(s);
    await waitForState(h.proxy, 'private', 5000);
    // The live connections reset after the 300th query, answering none of them.
    s.behaviour.silent = true;
    const c = await udp(h.port);
    const answers = Array.from({ length: 300 }, (_, i) => c.query(`q${i}.burst.test`, { timeoutMs: 8000 }));
    await waitFor(() => s.seen.filter((q) => q.name.endsWith('burst.test')).length >= 300, 5000, '300 queries at the server');
    s.behaviour.silent = false;
    s.resetAll();
    const results = await Promise.all(answers);
    for (const [i, a] of results.entries()) {
      expect(a.rcode).toBe('NOERROR');
      expect(firstA(a)).toBe(expectedA(i));
    }
    expect(h.proxy.counters.retries).toBeGreaterThanOrEqual(300);
    expect(h.proxy.counters.servfails).toBe(0);
    // The retries went out on a bounded set of connections, not 500: before and after
    // the reset, the kept one and at most burstConnections more for the burst (issue 12).
    expect(s.connections).toBeGreaterThanOrEqual(2);
    expect(s.connections).toBeLessThanOrEqual(2 * (1 + (DEFAULT_POOL_OPTIONS.burstConnections ?? 0)));
  });

  test('a query retried after its connection dropped: its record says how long the earlier attempt took, apart from the retry’s own times', async () => {
    const s = await server();
    const h = await proxyFor(s);
    const records: QueryRecord[] = [];
    h.proxy.on('query', (r) => records.push(r));
    await waitForState(h.proxy, 'private', 5000);
    const c = await udp(h.port);
    s.behaviour.silent = true;
    const answer = c.query('q7.dropped.test', { timeoutMs: 8000 });
    await waitFor(() => s.seen.some((q) => q.name === 'q7.dropped.test'), 5000, 'the query at the server');
    await new Promise((r) => setTimeout(r, 300));
    s.behaviour.silent = false;
    s.resetAll();
    expect(firstA(await answer)).toBe(expectedA(7));
    const r = records.find((x) => x.name === 'q7.dropped.test') as QueryRecord;
    expect(r.attempts).toBe(2);
    // What the dashboard's "Where the time went" shows: the wait on the dropped connection first, then the retry's queue and round trip.
    expect(r.earlierUs ?? 0).toBeGreaterThanOrEqual(300_000);
    const own = r.latencyUs - (r.earlierUs ?? 0) - r.queueUs - r.upstreamUs;
    // Each figure is rounded to the µs on its own: their sum may pass the total by one or two.
    expect(own, 'the dropped attempt is not counted as time in the proxy').toBeGreaterThanOrEqual(-2);
    expect(own).toBeLessThan(100_000);
    // A query answered by its first attempt has none.
    expect(firstA(await c.query('q8.after.test'))).toBe(expectedA(8));
    expect(records.find((x) => x.name === 'q8.after.test')?.earlierUs).toBeUndefined();
  });

  test('server idle close: the next query reconnects and the TLS session resumes', async () => {
    const s = await server();
    s.behaviour.idleCloseMs = 150;
    const h = await proxyFor(s);
    const ev = events(h);
    const c = await udp(h.port);
    expect(firstA(await c.query('q1.first.test'))).toBe(expectedA(1));
    await waitForEvent(h.proxy, 'connection', () => ev.connections.some((e) => e.type === 'close' && e.reason === 'server-close'), 3000, 'server close');
    const again = await c.query('q2.second.test');
    expect(firstA(again)).toBe(expectedA(2));
    expect(s.handshakes).toEqual({ full: 1, resumed: 1 });
    expect(h.proxy.counters.handshakesFull).toBe(1);
    expect(h.proxy.counters.handshakesResumed).toBe(1);
    const opens = ev.connections.filter((e) => e.type === 'open');
    expect(opens.at(-1)).toMatchObject({ type: 'open', resumed: true, verified: true });
  });

  test('our own idle timeout closes the connection; edns-tcp-keepalive from the server shortens it', async () => {
    const s = await server();
    s.behaviour.keepaliveMs = 300;
    const h = await proxyFor(s, { pool: { idleTimeoutMs: 60_000 } });
    const ev = events(h);
    const c = await udp(h.port);
    await c.query('q1.ka.test');
    await waitForEvent(h.proxy, 'connection', () => ev.connections.some((e) => e.type === 'keepalive'), 2000, 'keepalive event');
    expect(ev.connections.find((e) => e.type === 'keepalive')).toMatchObject({ timeoutMs: 300 });
    // Closed before the server's own close would race ours (connection/keepalive.ts).
    expect(h.proxy.connections()[0]?.idleTimeoutMs).toBe(200);
    await waitForEvent(h.proxy, 'connection', () => ev.connections.some((e) => e.type === 'close' && e.reason === 'idle'), 3000, 'idle close');
    // Asked for keepalive on every query (RFC 7828 §3.2.1).
    const opt = s.seen[0]?.packet.additionals?.find((r) => r.type === 'OPT');
    expect(opt && 'options' in opt ? opt.options.map((o) => o.code) : []).toContain(11);
  });

  test('a silent upstream: the client gets SERVFAIL within the deadline, not silence', async () => {
    const s = await server();
    const h = await proxyFor(s, { pool: { queryTimeoutMinMs: 150, queryTimeoutMaxMs: 200 } });
    await waitForState(h.proxy, 'private', 5000);
    s.behaviour.silent = true;
    const c = await udp(h.port);
    const a = await c.query('q3.void.test', { timeoutMs: 3000 });
    expect(a.rcode).toBe('SERVFAIL');
    // Within the per-query deadline (2.5 s at most), never silence.
    expect(a.ms).toBeLessThan(2600);
    expect(h.proxy.counters.timeouts).toBeGreaterThanOrEqual(1);
  });

  // Issue 42: beyond a connection's cap queries wait briefly for room rather than fail (this answered 6 of 10 SERVFAIL at once before).
  test('a full in-flight cap, no other connection allowed: the queries beyond it wait for room and are answered', async () => {
    const s = await server();
    for (let i = 0; i < 10; i++) s.behaviour.delays.set(`q${i}.hold.test`, 400);
    const h = await proxyFor(s, { pool: { maxInFlight: 4, burstConnections: 0 } });
    await waitForState(h.proxy, 'private', 5000);
    // Ten clients, one query each: within every client's share, so only the pool's cap stands in the way.
    const clients = await Promise.all(Array.from({ length: 10 }, () => udp(h.port)));
    const results = await Promise.all(clients.map((c, i) => c.query(`q${i}.hold.test`)));
    expect(results.map((r) => r.rcode)).toEqual(Array.from({ length: 10 }, () => 'NOERROR'));
    // Never more than 4 on the connection: three rounds of the held answers (400 ms each).
    expect(Math.max(...results.map((r) => r.ms))).toBeGreaterThanOrEqual(1100);
    expect(new Set(s.seen.filter((q) => q.name.endsWith('hold.test')).map((q) => q.connection)).size).toBe(1);
    expect(h.proxy.counters.inFlightCapHits).toBeGreaterThanOrEqual(6);
  });
});

describe('authentication', () => {
  test('strict mode refuses a certificate from an unknown CA, with the reason, and sends no query', async () => {
    const s = await server({ cert: 'impostor' });
    const h = await proxyFor(s);
    const ev = events(h);
    const c = await udp(h.port);
    const a = await c.query('q1.secret.test');
    expect(a.rcode).toBe('SERVFAIL');
    await waitForState(h.proxy, 'blocked', 3000);
    expect(h.proxy.privacy.state.reason).toMatch(/issued by an unknown CA: TLS interception\?/);
    const failed = ev.connections.find((e) => e.type === 'connect-failed');
    expect(failed).toMatchObject({ code: 'DOTSTUB_CERTIFICATE' });
    expect(s.seen).toHaveLength(0);
  });

  test('strict mode refuses a valid certificate for another name', async () => {
    const s = await server();
    const h = await proxyFor(s, { resolverArg: `127.0.0.1:${s.port}#dns.other.test` });
    const c = await udp(h.port);
    expect((await c.query('q1.x.test')).rcode).toBe('SERVFAIL');
    await waitForState(h.proxy, 'blocked', 3000);
    expect(h.proxy.privacy.state.reason).toMatch(/not valid for dns\.other\.test/);
    expect(s.seen).toHaveLength(0);
  });

  test('a port that does not speak TLS: the reason names the failed handshake, and no query is sent in clear', async () => {
    const net = await import('node:net');
    const received: Buffer[] = [];
    const plain = net.createServer((sock) => {
      sock.on('data', (d: Buffer) => received.push(d));
      sock.on('error', () => undefined);
      sock.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => plain.close(() => r())));
    const port = (plain.address() as import('node:net').AddressInfo).port;
    const h = await startProxy({ resolverArg: `127.0.0.1:${port}#dns.test`, mode: 'opportunistic' });
    onTestFinished(() => h.stop());
    const c = await udp(h.port);
    expect((await c.query('q1.clear.test')).rcode).toBe('SERVFAIL');
    await waitForState(h.proxy, 'blocked', 3000);
    expect(h.proxy.privacy.state.reason).toMatch(/TLS handshake with 127\.0\.0\.1:\d+ failed \(wrong version number\)/);
    // All the server ever got was TLS ClientHellos (record type 22), never a DNS message.
    expect(received.length).toBeGreaterThan(0);
    for (const chunk of received) expect(chunk[0]).toBe(0x16);
    expect(Buffer.concat(received).includes(Buffer.from('clear'))).toBe(false);
  });

  test('opportunistic mode uses TLS anyway and records it as unverified', async () => {
    const s = await server({ cert: 'impostor' });
    const h = await proxyFor(s, { mode: 'opportunistic' });
    const c = await udp(h.port);
    expect(firstA(await c.query('q5.opp.test'))).toBe(expectedA(5));
    expect(h.proxy.privacy.state.state).toBe('private-unverified');
    expect(h.proxy.privacy.state.reason).toMatch(/not verified/);
  });

  test('an SPKI pin authenticates on its own; a wrong pin is refused', async () => {
    const pki = testPki();
    const s = await server();
    const pinned = await proxyFor(s, { trustTestCa: false, pins: [pki.serverPin] });
    const c = await udp(pinned.port);
    expect(firstA(await c.query('q9.pin.test'))).toBe(expectedA(9));
    expect(pinned.proxy.privacy.state.state).toBe('private');

    const wrong = await proxyFor(s, { trustTestCa: true, pins: [Buffer.alloc(32, 7).toString('base64')] });
    const c2 = await udp(wrong.port);
    expect((await c2.query('q10.pin.test')).rcode).toBe('SERVFAIL');
    await waitForState(wrong.proxy, 'blocked', 3000);
    expect(wrong.proxy.privacy.state.reason).toMatch(/SPKI pins/);
  });
});

describe('wire hygiene', () => {
  test('queries to the resolver are padded to 128-octet blocks; --no-padding turns it off', async () => {
    const s = await server();
    const h = await proxyFor(s);
    const c = await udp(h.port);
    for (const name of ['q1.a.test', 'q2.a-much-longer-name-to-change-the-length.example.test', 'q3.x.test']) await c.query(name);
    expect(s.seen.length).toBe(3);
    for (const q of s.seen) expect(q.length % 128).toBe(0);
    expect(h.proxy.counters.paddingBytes).toBeGreaterThan(0);

    const s2 = await server();
    const h2 = await proxyFor(s2, { padding: false });
    const c2 = await udp(h2.port);
    await c2.query('q1.a.test');
    expect(s2.seen[0]?.length).toBeLessThan(128);
    expect(s2.seen[0]?.length).not.toBe(128);
  });

  test('malformed input never crashes the proxy: FORMERR, or silence when there is no header', async () => {
    const s = await server();
    const h = await proxyFor(s);
    const c = await udp(h.port);
    expect(await c.expectSilence(Buffer.from([1, 2, 3]))).toBe(true);
    // A header claiming one question, then garbage.
    const garbage = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xc0, 0xff]);
    const formerr = await c.sendRaw(garbage);
    expect(formerr.rcode).toBe('FORMERR');
    expect(formerr.packet.id).toBe(0x1234);
    // Two questions in one query.
    const two = dnsPacket.encode({
      type: 'query',
      id: 77,
      questions: [
        { type: 'A', name: 'q1.a.test' },
        { type: 'A', name: 'q2.a.test' },
      ],
    });
    expect((await c.sendRaw(two)).rcode).toBe('FORMERR');
    expect(h.proxy.counters.malformed).toBe(3);
    // Still serving.
    expect(firstA(await c.query('q4.after.test'))).toBe(expectedA(4));
  });
});

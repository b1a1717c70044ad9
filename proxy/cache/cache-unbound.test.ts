/**
 * The answer cache through the real proxy against Debian's unbound over
 * TLS, compared with what unbound itself answers: IDs, TTLs, negative
 * answers, DO/CD separation, stale answers when the resolver is gone,
 * flush on switch.
 */
import dnsPacket from 'dns-packet';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { expectedA, firstA, UdpClient } from '../../test-support/dns-client.js';
import { startFaultServer } from '../../test-support/fault-server.js';
import { startProxy, waitForState, type Harness } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { parseResolverArg } from '../config/resolvers.js';
import type { QueryRecord } from '../engine/query-record.js';

async function lab(records: string[] = []): Promise<{ u: UnboundServer; h: Harness; c: UdpClient; log: QueryRecord[] }> {
  const u = await startUnbound({ names: 50, localData: records });
  onTestFinished(() => u.stop());
  return { u, ...(await proxyTo(u.resolverArg)) };
}

/** dotstub (cache on, as shipped) forwarding to `resolverArg`, private, with a client and the query log. */
async function proxyTo(resolverArg: string): Promise<{ h: Harness; c: UdpClient; log: QueryRecord[] }> {
  const h = await startProxy({ resolverArg });
  onTestFinished(() => h.stop());
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  const log: QueryRecord[] = [];
  h.proxy.on('query', (r) => log.push(r));
  return { h, c, log };
}

function ttl(a: { packet: dnsPacket.DecodedPacket }): number | undefined {
  const r = a.packet.answers?.[0] ?? a.packet.authorities?.[0];
  return r && 'ttl' in r ? r.ttl : undefined;
}

/** A raw query with chosen DO, CD, AD and RD bits (RD on unless `rd: false`). */
function rawQuery(name: string, id: number, bits: { do?: boolean; cd?: boolean; ad?: boolean; rd?: boolean }): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags:
      (bits.rd === false ? 0 : dnsPacket.RECURSION_DESIRED) |
      (bits.cd ? dnsPacket.CHECKING_DISABLED : 0) |
      (bits.ad ? dnsPacket.AUTHENTIC_DATA : 0),
    questions: [{ type: 'A', name }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: bits.do ? dnsPacket.DNSSEC_OK : 0, flag_do: bits.do ?? false, options: [] }],
  });
}

describe('the answer cache against unbound', () => {
  test('a cache hit sends nothing, so it adds nothing to the padding the dashboard counts against the bytes sent to the resolver', async () => {
    const { h, c } = await lab();
    await c.query('n8.test', { id: 1 });
    const afterMiss = { padding: h.proxy.counters.paddingBytes, sent: h.proxy.counters.bytesToResolver };
    expect(afterMiss.padding).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) await c.query('n8.test', { id: 2 + i });
    expect(h.proxy.counters.cacheHits).toBeGreaterThanOrEqual(5);
    expect(h.proxy.counters.bytesToResolver).toBe(afterMiss.sent);
    expect(h.proxy.counters.paddingBytes).toBe(afterMiss.padding);
  });

  test('the same name twice: the second comes from the cache, with the asker’s ID, without a round trip', async () => {
    const { h, c, log } = await lab();
    const first = await c.query('n7.test', { id: 111 });
    const carried = h.proxy.connections()[0]?.queriesCarried;
    const second = await c.query('n7.test', { id: 222 });
    expect(second.packet.id).toBe(222);
    expect(firstA(second)).toBe(expectedA(7));
    expect(firstA(first)).toBe(expectedA(7));
    expect(h.proxy.connections()[0]?.queriesCarried).toBe(carried);
    expect(log.map((r) => r.source)).toEqual(['upstream', 'cache']);
    expect(log[1]?.connectionId).toBeNull();
    expect(h.proxy.counters.cacheHits).toBe(1);
  });

  test('TTLs count down by the answer’s age', async () => {
    const { c } = await lab();
    const first = await c.query('n8.test');
    expect(ttl(first)).toBe(300);
    // The cache's clock moves 2.1 s on, not the test's wall time (timers stay real: the proxy runs as ever).
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime(Date.now() + 2100);
    const later = await c.query('n8.test');
    expect(ttl(later)).toBeLessThanOrEqual(298);
    expect(ttl(later)).toBeGreaterThanOrEqual(297);
  });

  test('NXDOMAIN is cached for the SOA’s negative TTL (RFC 2308), with its SOA', async () => {
    const { c, log } = await lab();
    const first = await c.query('missing.test');
    const second = await c.query('missing.test');
    expect([first.rcode, second.rcode]).toEqual(['NXDOMAIN', 'NXDOMAIN']);
    expect(second.packet.authorities?.[0]).toMatchObject({ type: 'SOA' });
    expect(ttl(second)).toBeLessThanOrEqual(300);
    expect(log.map((r) => r.source)).toEqual(['upstream', 'cache']);
  });

  test('DO and CD make separate entries: a DNSSEC query is never served a plain answer', async () => {
    const { c, log } = await lab();
    await c.sendRaw(rawQuery('n9.test', 1, {}));
    const withDo = await c.sendRaw(rawQuery('n9.test', 2, { do: true }));
    const withCd = await c.sendRaw(rawQuery('n9.test', 3, { cd: true }));
    expect(withDo.packet.id).toBe(2);
    expect(withCd.packet.id).toBe(3);
    expect(log.map((r) => r.source)).toEqual(['upstream', 'upstream', 'upstream']);
    await c.sendRaw(rawQuery('n9.test', 4, { do: true }));
    expect(log[3]?.source).toBe('cache');
  });

  test('another case of the same name is a hit and keeps its own case (0x20)', async () => {
    const { c, log } = await lab();
    await c.query('n10.test');
    const mixed = await c.query('N10.TeSt');
    expect(mixed.packet.questions?.[0]?.name).toBe('N10.TeSt');
    expect(firstA(mixed)).toBe(expectedA(10));
    expect(log[1]?.source).toBe('cache');
  });

  test('an expired answer is served stale (TTL 30, marked) when the resolver is gone, and never while it answers', async () => {
    const { u, c, log } = await lab(['short.test. 1 IN A 192.0.2.200']);
    expect(ttl(await c.query('short.test'))).toBe(1);
    // The clock moves on by itself and in jumps past each TTL; timers stay real.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime(Date.now() + 1200);
    const refreshed = await c.query('short.test');
    expect(log[1]?.source).toBe('upstream');
    expect(ttl(refreshed)).toBe(1);
    vi.setSystemTime(Date.now() + 1200);
    await u.stop();
    const stale = await c.query('short.test', { timeoutMs: 5000 });
    expect(stale.rcode).toBe('NOERROR');
    expect(firstA(stale)).toBe('192.0.2.200');
    expect(ttl(stale)).toBe(30);
    expect(log[2]?.source).toBe('stale');
    // A name never seen gets SERVFAIL, not an invention.
    expect((await c.query('n11.test', { timeoutMs: 5000 })).rcode).toBe('SERVFAIL');
  });

  test('switching resolvers flushes the cache: the new resolver’s answer, not the old one’s', async () => {
    const { h, c, log } = await lab();
    const other = await startUnbound({ names: 0, extra: { 'n12.test.': '198.51.100.12' } });
    onTestFinished(() => other.stop());
    expect(firstA(await c.query('n12.test'))).toBe(expectedA(12));
    await h.proxy.choice.choose(parseResolverArg(other.resolverArg));
    expect(firstA(await c.query('n12.test'))).toBe('198.51.100.12');
    expect(log.map((r) => r.source)).toEqual(['upstream', 'upstream']);
  });

  test('a late answer from the resolver switched away from is never cached: after the switch only the new resolver answers', async () => {
    // Resolver A answers slow.test late; B (unbound) answers it with another address.
    const a = await startFaultServer();
    onTestFinished(() => a.stop());
    a.behaviour.delays.set('slow.test', 600);
    const b = await startUnbound({ names: 0, extra: { 'slow.test.': '198.51.100.77' } });
    onTestFinished(() => b.stop());
    const { h, c, log } = await proxyTo(a.resolverArg);

    const inFlight = c.query('slow.test', { timeoutMs: 5000 });
    await a.whenSeen((q) => q.name === 'slow.test'); // asked of A, its answer 600 ms away
    await h.proxy.choice.choose(parseResolverArg(b.resolverArg));
    // The asker gets A's answer once (it asked A) …
    expect(firstA(await inFlight)).toBe('192.0.2.254');
    // … but from now on the name is B's, from B, never A's from the cache.
    const after = await c.query('slow.test', { timeoutMs: 5000 });
    expect(firstA(after)).toBe('198.51.100.77');
    expect(log.map((r) => r.source)).toEqual(['upstream', 'upstream']);
    expect(firstA(await c.query('slow.test', { timeoutMs: 5000 }))).toBe('198.51.100.77');
  });

  test('a cached answer carries the asker’s header bits: RD copied (RFC 1035 §4.1.1), AD only for an AD or DO asker (RFC 6840 §5.7), CD echoed, ID and question case its own', async () => {
    const { c, log } = await lab();
    const header = (raw: Buffer): { rd: boolean; ad: boolean; cd: boolean; ra: boolean } => {
      const f = raw.readUInt16BE(2);
      return { rd: (f & 0x0100) !== 0, ad: (f & 0x0020) !== 0, cd: (f & 0x0010) !== 0, ra: (f & 0x0080) !== 0 };
    };
    const first = await c.sendRaw(rawQuery('n13.test', 1, { rd: true }));
    expect(header(first.raw).rd).toBe(true);
    // RD=0 from the cache: RD=0, as a straight-through answer would be.
    const noRd = await c.sendRaw(rawQuery('N13.test', 2, { rd: false }));
    expect(log.map((r) => r.source)).toEqual(['upstream', 'cache']);
    expect(noRd.packet.id).toBe(2);
    expect(noRd.packet.questions?.[0]?.name).toBe('N13.test');
    expect(header(noRd.raw)).toMatchObject({ rd: false, ra: true, cd: false });
    // And back: an RD=0 answer cached first is served with RD=1 to an RD=1 asker.
    await c.sendRaw(rawQuery('n14.test', 3, { rd: false }));
    const rd = await c.sendRaw(rawQuery('n14.test', 4, { rd: true }));
    expect(log.map((r) => r.source).slice(2)).toEqual(['upstream', 'cache']);
    expect(header(rd.raw).rd).toBe(true);
    // AD: an AD=1 asker is a separate entry from a plain one, and what it gets matches what unbound says straight through.
    const plain = await c.sendRaw(rawQuery('n15.test', 5, {}));
    const ad = await c.sendRaw(rawQuery('n15.test', 6, { ad: true }));
    expect(log.map((r) => r.source).slice(4)).toEqual(['upstream', 'upstream']);
    expect(header(plain.raw).ad).toBe(false);
    const adCached = await c.sendRaw(rawQuery('n15.test', 7, { ad: true }));
    expect(log[6]?.source).toBe('cache');
    expect(header(adCached.raw).ad).toBe(header(ad.raw).ad);
    const plainCached = await c.sendRaw(rawQuery('n15.test', 8, {}));
    expect(header(plainCached.raw).ad).toBe(false);
  });

  test('answers are kept without the TLS hop’s padding, and served whole: the same records, an OPT for an EDNS asker', async () => {
    const { h, c, log } = await lab();
    for (let i = 20; i < 30; i++) await c.query(`n${i}.test`);
    const size = h.proxy.cacheSize;
    expect(size?.entries).toBe(10);
    // Padded, each answer would be a 468-octet block (RFC 8467) before any bookkeeping.
    expect((size?.bytes ?? 0) / 10).toBeLessThan(468);
    const served = await c.query('n21.test');
    expect(log.at(-1)?.source).toBe('cache');
    expect(firstA(served)).toBe(expectedA(21));
    const opt = served.packet.additionals?.find((r) => r.type === 'OPT');
    expect(opt).toBeDefined();
    expect(opt && 'options' in opt ? opt.options : ['missing']).toEqual([]);
  });
});

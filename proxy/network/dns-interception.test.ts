/**
 * The DNS-interception check's rules against real UDP servers on loopback
 * (the lab test, dns-interception-lab.test.ts, puts it behind a router that
 * DNATs port 53): any answer to its one query is a verdict; silence, a stray
 * packet or an answer to another query is not; the query carries only the
 * constant name.
 */
import dgram from 'node:dgram';
import { describe, expect, onTestFinished, test } from 'vitest';
import { dnsPacket } from '../dns/dns-packet.js';
import { udpDnsServer } from '../../test-support/network-check-rig.js';
import { CHECK_NAME, answerWords, checkDnsInterception } from './dns-interception.js';

/** A UDP server on 127.0.0.1; `reply` says what to send back for each query (nothing: undefined). */
async function serve(reply: (q: ReturnType<typeof dnsPacket.decode>, raw: Buffer) => Buffer[] | undefined): Promise<{ port: number; seen: Buffer[]; close: () => void }> {
  return udpDnsServer((msg) => reply(dnsPacket.decode(msg), msg) ?? []);
}

const answer = (q: ReturnType<typeof dnsPacket.decode>, o: { rcode?: string; id?: number; name?: string; a?: string } = {}): Buffer =>
  dnsPacket.encode({
    type: 'response',
    id: o.id ?? q.id ?? 0,
    flags: dnsPacket.RECURSION_AVAILABLE | (o.rcode === 'NXDOMAIN' ? 3 : o.rcode === 'REFUSED' ? 5 : 0),
    questions: [{ type: 'A', name: o.name ?? CHECK_NAME }],
    answers: o.a ? [{ type: 'A', name: CHECK_NAME, ttl: 1, data: o.a }] : [],
  });

describe('checkDnsInterception', () => {
  test('an NXDOMAIN from where no server can be is a verdict; the query holds the constant name and nothing else', async () => {
    const srv = await serve((q) => [answer(q, { rcode: 'NXDOMAIN' })]);
    const r = await checkDnsInterception({ addresses: ['127.0.0.1'], port: srv.port, timeoutMs: 1000 });
    expect(r.answered).toMatchObject({ address: '127.0.0.1', answered: true, rcode: 'NXDOMAIN', addresses: [] });
    expect(answerWords(r.answered as NonNullable<typeof r.answered>)).toBe('NXDOMAIN');
    const q = dnsPacket.decode(srv.seen[0] as Buffer);
    expect(q.questions).toEqual([{ type: 'A', name: CHECK_NAME, class: 'IN' }]);
    expect(q.additionals ?? []).toEqual([]);
    expect(srv.seen).toHaveLength(1);
  });

  test('REFUSED counts too, and an address answered is named', async () => {
    const refused = await serve((q) => [answer(q, { rcode: 'REFUSED' })]);
    expect((await checkDnsInterception({ addresses: ['127.0.0.1'], port: refused.port, timeoutMs: 1000 })).answered?.rcode).toBe('REFUSED');
    const rewritten = await serve((q) => [answer(q, { a: '10.53.1.1' })]);
    const r = await checkDnsInterception({ addresses: ['127.0.0.1'], port: rewritten.port, timeoutMs: 1000 });
    expect(answerWords(r.answered as NonNullable<typeof r.answered>)).toBe('NOERROR with 10.53.1.1');
  });

  test('silence is "not seen", after the timeout and no longer', async () => {
    const srv = await serve(() => undefined);
    const t0 = Date.now();
    const r = await checkDnsInterception({ addresses: ['127.0.0.1'], port: srv.port, timeoutMs: 300 });
    expect(r.answered).toBeNull();
    expect(r.outcomes[0]).toMatchObject({ answered: false, detail: expect.stringMatching(/^no answer in 300 ms/) as unknown });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('an answer to another query (wrong ID, another name) or garbage is not an answer', async () => {
    const srv = await serve((q) => [Buffer.from('not dns'), answer(q, { id: ((q.id ?? 0) + 1) & 0xffff, rcode: 'NXDOMAIN' }), answer(q, { name: 'other.invalid', rcode: 'NXDOMAIN' })]);
    const r = await checkDnsInterception({ addresses: ['127.0.0.1'], port: srv.port, timeoutMs: 300 });
    expect(r.answered).toBeNull();
  });

  test('one answer is enough: the other address is not waited for', async () => {
    const srv = await serve((q) => [answer(q, { rcode: 'NXDOMAIN' })]);
    // The same port on 127.0.0.2, bound and silent (nothing bound would answer with ICMP at once).
    const quiet = dgram.createSocket('udp4');
    onTestFinished(() => {
      quiet.close();
    });
    await new Promise<void>((r) => quiet.bind(srv.port, '127.0.0.2', r));
    const t0 = Date.now();
    const r = await checkDnsInterception({ addresses: ['127.0.0.2', '127.0.0.1'], port: srv.port, timeoutMs: 2000 });
    expect(r.answered?.address).toBe('127.0.0.1');
    expect(r.outcomes[0]).toMatchObject({ address: '127.0.0.2', answered: false, detail: 'not waited for: another address answered' });
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('nothing listening (ICMP port unreachable on loopback) is not a verdict', async () => {
    const srv = await serve(() => undefined);
    srv.close();
    const r = await checkDnsInterception({ addresses: ['127.0.0.1'], port: srv.port, timeoutMs: 500 });
    expect(r.answered).toBeNull();
  });
});

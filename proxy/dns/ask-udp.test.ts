/**
 * One question over UDP (ask-udp.ts) against real sockets on loopback: what
 * each `read` accepts, and how a wait ends (answer, timeout, abort, ICMP
 * error, not an address). The checks that use it have their own tests
 * (network/dns-interception.test.ts, the DDR and liveness labs).
 */
import { describe, expect, test } from 'vitest';
import { udpDnsServer } from '../../test-support/network-check-rig.js';
import { askOverUdp, decodedAnswer, idOnly } from './ask-udp.js';

describe('askOverUdp', () => {
  test('idOnly takes any datagram that starts with the ID and parses nothing more (the watchdog, as root)', async () => {
    const { port } = await udpDnsServer((q) => [Buffer.concat([q.subarray(0, 2), Buffer.from('not dns')])]);
    const r = await askOverUdp({ host: '127.0.0.1', port, name: 'liveness.dotstub.resolver.arpa', type: 'A', timeoutMs: 1000, read: idOnly });
    expect(r.answered).toBe(true);
  });

  test('decodedAnswer ignores garbage and the same ID without our question, and waits on', async () => {
    const { port } = await udpDnsServer((q) => [Buffer.concat([q.subarray(0, 2), Buffer.from('not dns')])]);
    const r = await askOverUdp({ host: '127.0.0.1', port, name: 'x.invalid', type: 'A', timeoutMs: 200, read: decodedAnswer('x.invalid') });
    expect(r).toEqual({ answered: false, why: 'timeout' });
  });

  test('an abort ends the wait at once; an ICMP error and a name that is no address are said', async () => {
    const srv = await udpDnsServer(() => []);
    const quiet = srv.port;
    const stop = new AbortController();
    const t0 = Date.now();
    const waiting = askOverUdp({ host: '127.0.0.1', port: quiet, name: 'x.invalid', type: 'A', timeoutMs: 5000, signal: stop.signal, read: idOnly });
    setTimeout(() => stop.abort(), 50);
    expect(await waiting).toEqual({ answered: false, why: 'stopped' });
    expect(Date.now() - t0).toBeLessThan(1000);
    srv.close();
    expect(await askOverUdp({ host: '127.0.0.1', port: quiet, name: 'x.invalid', type: 'A', timeoutMs: 2000, read: idOnly })).toMatchObject({ answered: false, why: 'failed', detail: expect.stringMatching(/^not sent or not answered: .*ECONNREFUSED/) as unknown });
    expect(await askOverUdp({ host: 'localhost', port: 53, name: 'x.invalid', type: 'A', timeoutMs: 100, read: idOnly })).toEqual({ answered: false, why: 'not-an-address' });
  });
});

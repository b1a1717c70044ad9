/**
 * One question over UDP (ask-udp.ts) against real sockets on loopback: what
 * each `read` accepts, and how a wait ends (answer, timeout, abort, ICMP
 * error, not an address). The checks that use it have their own tests
 * (network/dns-interception.test.ts, the DDR and liveness labs).
 */
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { askOverUdp, decodedAnswer, idOnly } from './ask-udp.js';

const sockets: dgram.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

/** A UDP server on 127.0.0.1 that sends back what `reply` makes of each query. */
async function serve(reply: (query: Buffer) => Buffer[]): Promise<number> {
  const s = dgram.createSocket('udp4');
  sockets.push(s);
  s.on('message', (msg, rinfo) => {
    for (const out of reply(msg)) s.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

describe('askOverUdp', () => {
  test('idOnly takes any datagram that starts with the ID and parses nothing more (the watchdog, as root)', async () => {
    const port = await serve((q) => [Buffer.concat([q.subarray(0, 2), Buffer.from('not dns')])]);
    const r = await askOverUdp({ host: '127.0.0.1', port, name: 'liveness.dotstub.resolver.arpa', type: 'A', timeoutMs: 1000, read: idOnly });
    expect(r.answered).toBe(true);
  });

  test('decodedAnswer ignores garbage and the same ID without our question, and waits on', async () => {
    const port = await serve((q) => [Buffer.concat([q.subarray(0, 2), Buffer.from('not dns')])]);
    const r = await askOverUdp({ host: '127.0.0.1', port, name: 'x.invalid', type: 'A', timeoutMs: 200, read: decodedAnswer('x.invalid') });
    expect(r).toEqual({ answered: false, why: 'timeout' });
  });

  test('an abort ends the wait at once; an ICMP error and a name that is no address are said', async () => {
    const quiet = await serve(() => []);
    const stop = new AbortController();
    const t0 = Date.now();
    const waiting = askOverUdp({ host: '127.0.0.1', port: quiet, name: 'x.invalid', type: 'A', timeoutMs: 5000, signal: stop.signal, read: idOnly });
    setTimeout(() => stop.abort(), 50);
    expect(await waiting).toEqual({ answered: false, why: 'stopped' });
    expect(Date.now() - t0).toBeLessThan(1000);
    (sockets.pop() as dgram.Socket).close();
    expect(await askOverUdp({ host: '127.0.0.1', port: quiet, name: 'x.invalid', type: 'A', timeoutMs: 2000, read: idOnly })).toMatchObject({ answered: false, why: 'failed', detail: expect.stringMatching(/^not sent or not answered: .*ECONNREFUSED/) as unknown });
    expect(await askOverUdp({ host: 'localhost', port: 53, name: 'x.invalid', type: 'A', timeoutMs: 100, read: idOnly })).toEqual({ answered: false, why: 'not-an-address' });
  });
});

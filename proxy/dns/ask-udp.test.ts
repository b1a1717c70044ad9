/**
 * One question over UDP (ask-udp.ts) against real sockets on loopback: what
 * each `read` accepts, and how a wait ends (answer, timeout, abort, ICMP
 * error, not an address). The checks that use it have their own tests
 * (network/dns-interception.test.ts, the DDR and liveness labs).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, test } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
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

/** Root and unshare: a network namespace of its own with no route at all, as on a network without IPv6 (or offline). */
const noRouteMissing =
  process.geteuid?.() !== 0 ? 'needs root (a network namespace of its own)' : !fs.existsSync('/usr/bin/unshare') ? '/usr/bin/unshare is not installed (util-linux)' : !fs.existsSync('/usr/sbin/ip') ? '/usr/sbin/ip is not installed (iproute2)' : null;

describe('askOverUdp where there is no route', skipWith(noRouteMissing), () => {
  // Issue 41: on an IPv4-only network the IPv6 connect failed with ENETUNREACH in its callback, send() then took its
  // own callback for a port and threw inside the callback: the process died. The question's outcome says why instead.
  test('ENETUNREACH for IPv6 and IPv4 is the outcome, in words, and the process lives on', () => {
    const script = `
      import { askOverUdp, idOnly } from './proxy/dns/ask-udp.ts';
      const ask = (host) => askOverUdp({ host, port: 53, name: 'x.invalid', type: 'A', timeoutMs: 1500, read: idOnly });
      const out = await Promise.all([ask('2001:db8::1'), ask('192.0.2.1')]);
      await new Promise((r) => setTimeout(r, 100));
      console.log(JSON.stringify(out));
    `;
    // lo up, as on any machine: ::1 and 127.0.0.1 exist, and no route leads anywhere else.
    const r = spawnSync('unshare', ['--net', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr, 'the child died').not.toMatch(/ERR_SOCKET_BAD_PORT|RangeError/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null') as unknown[];
    expect(out).toEqual([
      { answered: false, why: 'failed', detail: 'not sent: no route to it from this network (ENETUNREACH)' },
      { answered: false, why: 'failed', detail: 'not sent: no route to it from this network (ENETUNREACH)' },
    ]);
  });
});

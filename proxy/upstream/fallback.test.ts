/**
 * The fallback's policy with pools of fake connections and fake timers:
 * which transport carries queries, when it switches and back, what it says,
 * and that interception is never routed around.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { FakeConnection } from '../../test-support/fake-connection.js';
import { request, type TestRequest } from '../../test-support/upstream-requests.js';
import { customResolver } from '../config/resolvers.js';
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import { CertificateError, ConnectFailedError, ConnectTimeoutError, type DotstubError } from '../errors.js';
import { Fallback } from './fallback.js';
import type { Transport, TransportChange } from './managed.js';
import { Pool } from './pool.js';
import { DEFAULT_POOL_OPTIONS } from './pool/options.js';

const resolver = customResolver({ id: 'lab', label: 'Lab', address: '192.0.2.1', authName: 'dns.test', dohUrl: 'https://dns.test/dns-query' });

interface Lab {
  readonly fallback: Fallback;
  readonly dot: FakeConnection[];
  readonly doh: FakeConnection[];
  readonly events: TransportChange[];
}

let made: Fallback[] = [];
afterEach(() => {
  for (const f of made) f.destroy();
  made = [];
  vi.useRealTimers();
});

function lab(): Lab {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const dot: FakeConnection[] = [];
  const doh: FakeConnection[] = [];
  const pool = (transport: Transport, into: FakeConnection[], selfRetry: boolean): Pool =>
    new Pool({
      transport,
      resolver,
      options: DEFAULT_POOL_OPTIONS,
      selfRetry,
      factory: (spec) => {
        const c = new FakeConnection(spec, 1000);
        into.push(c);
        return c;
      },
    });
  const fallback = new Fallback({ primary: pool('dot', dot, false), secondary: pool('doh', doh, true), primaryPort: 853, secondaryPort: 443 });
  made.push(fallback);
  const events: TransportChange[] = [];
  fallback.on('transport', (e) => events.push(e));
  return { fallback, dot, doh, events };
}

interface Outcome {
  readonly req: TestRequest;
  readonly err: DotstubError | null;
  readonly answer: UpstreamAnswer | null;
}

function ask(f: Fallback, name: string): Outcome[] {
  const out: Outcome[] = [];
  f.resolve(request(name), (req, err, answer) => out.push({ req, err, answer }));
  return out;
}

const last = <T>(xs: readonly T[]): T | undefined => xs[xs.length - 1];

describe('Fallback(DoT; DoH)', () => {
  test('an open DoT connection that goes silent (a block that starts mid-session) hands new queries to DoH at once', () => {
    const { fallback, dot, doh, events } = lab();
    fallback.warm();
    dot[0]?.open();
    ask(fallback, 'lost.test');
    // The pool's deadline finds nothing came back and closes the connection as unresponsive.
    dot[0]?.close('unresponsive');
    expect(fallback.active).toBe('doh');
    expect(last(events)?.reason).toBe('port 853 is blocked here; trying DNS-over-HTTPS on 443');
    const o = ask(fallback, 'next.test');
    doh[0]?.open();
    doh[0]?.answerAll();
    expect(o[0]?.err).toBeNull();
    expect(fallback.transport).toBe('doh');
  });

  test('only silence counts: a connection closed for idleness is no reason to switch', () => {
    const { fallback, dot } = lab();
    fallback.warm();
    dot[0]?.open();
    ask(fallback, 'a.test');
    dot[0]?.close('idle');
    expect(fallback.active).toBe('dot');
  });

  test('its name shows both sides; while DoT works, DoH is never opened', () => {
    const { fallback, dot, doh } = lab();
    expect(fallback.name).toBe('Fallback(DoT(lab); DoH(lab))');
    fallback.warm();
    dot[0]?.open();
    const o = ask(fallback, 'a.test');
    dot[0]?.answerAll();
    expect(o[0]?.err).toBeNull();
    expect(fallback.transport).toBe('dot');
    expect(doh).toHaveLength(0);
  });

  test('port 853 refused: the query waiting on it is answered over DoH, and the user is told why', () => {
    const { fallback, dot, doh, events } = lab();
    const o = ask(fallback, 'a.test');
    dot[0]?.refuse(new ConnectFailedError('cannot connect to 192.0.2.1:853: connection refused (ECONNREFUSED)'));
    expect(o).toHaveLength(0);
    expect(doh).toHaveLength(1);
    expect(last(events)).toMatchObject({ transport: null, active: 'doh', reason: 'port 853 is blocked here; trying DNS-over-HTTPS on 443' });
    doh[0]?.open();
    doh[0]?.answerAll();
    expect(o[0]?.err).toBeNull();
    expect(o[0]?.req.trace.connectionId).toBe(doh[0]?.id);
    expect(fallback.transport).toBe('doh');
    expect(last(events)).toMatchObject({ transport: 'doh', reason: 'port 853 is blocked here; using DNS-over-HTTPS on 443', detail: expect.stringMatching(/ECONNREFUSED/) as unknown });
    // Later queries go straight to DoH.
    const next = ask(fallback, 'b.test');
    doh[0]?.answerAll();
    expect(next[0]?.err).toBeNull();
    expect(dot).toHaveLength(1);
  });

  test('strict interception (certificate, pin) is never routed around: the query fails typed, DoH is not opened', () => {
    const { fallback, dot, doh, events } = lab();
    const o = ask(fallback, 'a.test');
    dot[0]?.refuse(new CertificateError('refused 192.0.2.1: certificate for dns.test was issued by an unknown CA: TLS interception?', 'SELF_SIGNED_CERT_IN_CHAIN'));
    expect(o[0]?.err?.code).toBe('DOTSTUB_CERTIFICATE');
    expect(doh).toHaveLength(0);
    expect(fallback.transport).toBeNull();
    expect(last(events)?.reason).toMatch(/looks intercepted; not falling back/);
    vi.advanceTimersByTime(120_000);
    expect(doh).toHaveLength(0);
    // …while DoT keeps being probed, and comes back by itself.
    expect(dot.length).toBeGreaterThan(1);
    last(dot)?.open();
    expect(fallback.transport).toBe('dot');
  });

  test('DoT is re-probed 5 s, 10 s, 20 s, 40 s, then every 60 s; its first success takes queries back', async () => {
    const { fallback, dot, doh, events } = lab();
    fallback.warm();
    dot[0]?.refuse(new ConnectTimeoutError('port 853 at 192.0.2.1 timed out after 5000 ms from this network'));
    doh[0]?.open();
    const probesAt: number[] = [];
    const start = Date.now();
    for (let t = 0; t < 250_000; t += 500) {
      await vi.advanceTimersByTimeAsync(500);
      const c = last(dot);
      if (c && c.state === 'connecting') {
        probesAt.push(Math.round((Date.now() - start) / 1000));
        c.refuse(new ConnectTimeoutError('port 853 timed out'));
      }
    }
    expect(probesAt).toEqual([5, 15, 35, 75, 135, 195]);
    expect(fallback.transport).toBe('doh');
    await vi.advanceTimersByTimeAsync(60_000);
    last(dot)?.open();
    expect(fallback.active).toBe('dot');
    expect(last(events)).toMatchObject({ transport: 'dot', reason: 'port 853 works again; back to DNS-over-TLS' });
    const o = ask(fallback, 'c.test');
    last(dot)?.answerAll();
    expect(o[0]?.req.trace.connectionId).toBe(last(dot)?.id);
  });

  test('never switches faster than every 10 s: DoT back after 3 s waits until 10 s, then takes queries', async () => {
    const { fallback, dot, doh } = lab();
    fallback.warm();
    dot[0]?.refuse(new ConnectFailedError('refused'));
    doh[0]?.open();
    await vi.advanceTimersByTimeAsync(3_000);
    // DoT reachable again (a probe or the pool reconnecting): not yet.
    (fallback.primary as Pool).warm();
    last(dot)?.open();
    const early = ask(fallback, 'early.test');
    doh[0]?.answerAll();
    expect(early[0]?.req.trace.connectionId).toBe(doh[0]?.id);
    await vi.advanceTimersByTimeAsync(7_000);
    expect(fallback.active).toBe('dot');
    const later = ask(fallback, 'later.test');
    last(dot)?.answerAll();
    expect(later[0]?.req.trace.connectionId).toBe(last(dot)?.id);
  });

  test('DoH failing too: no transport, said in words; queries get a typed error, never silence', () => {
    const { fallback, dot, doh, events } = lab();
    const o = ask(fallback, 'a.test');
    dot[0]?.refuse(new ConnectFailedError('refused'));
    doh[0]?.open();
    doh[0]?.close('reset');
    const o2 = ask(fallback, 'b.test');
    last(doh)?.refuse(new ConnectFailedError('cannot connect to 192.0.2.1:443: connection refused (ECONNREFUSED)'));
    expect(fallback.transport).toBeNull();
    expect(last(events)?.reason).toMatch(/DNS-over-HTTPS on 443 failed too/);
    expect(o.length + o2.length).toBe(2);
    expect(o2[0]?.err?.code).toBe('DOTSTUB_CONNECT_FAILED');
  });

  test('hinted startOn DoH (853 was blocked on this network): the first query goes to DoH at once, DoT is probed at 5 s and takes queries back', async () => {
    const { fallback, dot, doh, events } = lab();
    fallback.prefer({ startOn: 'doh' });
    fallback.warm();
    const o = ask(fallback, 'a.test');
    expect(dot).toHaveLength(0);
    expect(last(events)).toMatchObject({ active: 'doh', reason: 'port 853 was blocked on this network before; trying DNS-over-HTTPS on 443 first, and trying 853 again in the background' });
    doh[0]?.open();
    doh[0]?.answerAll();
    expect(o[0]?.req.trace.connectionId).toBe(doh[0]?.id);
    expect(fallback.transport).toBe('doh');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(dot).toHaveLength(1);
    dot[0]?.open();
    // Not a switch from a failure: DoT takes queries back at once.
    expect(fallback.active).toBe('dot');
    expect(last(events)?.reason).toBe('port 853 works again; back to DNS-over-TLS');
  });

  test('a network change with the hint: DoH at once, no DoT attempt first; without it, DoT first', () => {
    const { fallback, dot, doh } = lab();
    fallback.warm();
    dot[0]?.open();
    fallback.networkChanged({ startOn: 'doh' });
    expect(fallback.active).toBe('doh');
    expect(dot.filter((c) => c.state === 'connecting')).toHaveLength(0);
    expect(doh.filter((c) => c.state === 'connecting')).toHaveLength(1);
    last(doh)?.open();
    fallback.networkChanged();
    expect(last(dot)?.state).toBe('connecting');
  });

  test('the hint was wrong (DoH fails, DoT has not failed here): the ladder runs from DoT, and the waiting query is answered there', () => {
    const { fallback, dot, doh, events } = lab();
    fallback.prefer({ startOn: 'doh' });
    const o = ask(fallback, 'a.test');
    doh[0]?.refuse(new ConnectFailedError('cannot connect to 192.0.2.1:443: connection refused (ECONNREFUSED)'));
    expect(fallback.active).toBe('dot');
    expect(last(events)?.reason).toBe('DNS-over-HTTPS on 443 failed on this network; trying DNS-over-TLS on 853');
    last(dot)?.open();
    last(dot)?.answerAll();
    expect(o).toHaveLength(1);
    expect(o[0]?.err).toBeNull();
  });
});

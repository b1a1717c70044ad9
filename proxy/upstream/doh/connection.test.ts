/**
 * What is particular to DoH: ID 0 on the wire with answers matched by
 * stream, padding kept, the request's HTTP form, out-of-order answers, HTTP
 * statuses and stream resets as typed errors, GOAWAY, and authentication of
 * the URL host before a single byte of HTTP is written. Against Debian's
 * unbound where it can show it; a DoH server of our own where it can't.
 */
import http2 from 'node:http2';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeDohServer, startImpostorTls, type DohBehaviour } from '../../../test-support/doh-server.js';
import { waitFor, waitForEvent } from '../../../test-support/proxy-harness.js';
import { expectedA } from '../../../test-support/dns-client.js';
import { startUnbound, type UnboundServer } from '../../../test-support/unbound.js';
import { request, type TestRequest } from '../../../test-support/upstream-requests.js';
import { customResolver } from '../../config/resolvers.js';
import type { UpstreamAnswer } from '../../dns/upstream-answer.js';
import type { DotstubError } from '../../errors.js';
import type { HandshakeInfo } from '../connection/contract.js';
import type { AuthPolicy } from '../auth-policy.js';
import { Pool } from '../pool.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { dohConnectionFactory } from './connection.js';

interface Outcome {
  readonly req: TestRequest;
  readonly err: DotstubError | null;
  readonly answer: UpstreamAnswer | null;
  readonly at: number;
}

const pools: Pool[] = [];
afterAll(() => {
  for (const p of pools) p.destroy();
});

function dohPool(url: string, auth: AuthPolicy, pins: readonly string[] = []): Pool {
  const resolver = customResolver({ address: '127.0.0.1', authName: 'dns.test', pins, dohUrl: url });
  const options = { ...DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2000 };
  const pool = new Pool({ transport: 'doh', resolver, options, factory: dohConnectionFactory(resolver, auth, options) });
  pools.push(pool);
  return pool;
}

function resolve(pool: Pool, req: TestRequest): Promise<Outcome> {
  return new Promise((done) => pool.resolve(req, (r, err, answer) => done({ req: r, err, answer, at: performance.now() })));
}

function firstA(answer: UpstreamAnswer | null): string | undefined {
  const a = answer ? dnsPacket.decode(answer.raw).answers?.find((r) => r.type === 'A') : undefined;
  return a && 'data' in a ? String(a.data) : undefined;
}

describe('DoH against unbound', () => {
  let unbound: UnboundServer;
  let auth: AuthPolicy;
  beforeAll(async () => {
    unbound = await startUnbound({ names: 300, dohPort: 0 });
    auth = { mode: 'strict', ca: [unbound.pki.caPem] };
  });
  afterAll(async () => {
    await unbound.stop();
  });

  test('300 names at once: every answer correct, every wire ID 0, whatever ID the request carried; at most 100 in flight a session, so 3 sessions', async () => {
    const pool = dohPool(unbound.dohUrl as string, auth);
    const reqs = Array.from({ length: 300 }, (_, i) => {
      const r = request(`n${i}.test`);
      // As if another transport had written its ID first (a fallback retry).
      r.wire.writeUInt16BE(0xbeef, 2);
      return r;
    });
    const outcomes = await Promise.all(reqs.map((r) => resolve(pool, r)));
    expect(outcomes.filter((o) => o.err)).toEqual([]);
    outcomes.forEach((o, i) => expect(firstA(o.answer)).toBe(expectedA(i)));
    // unbound echoes the query's ID: 0 on every answer means 0 on every query (RFC 8484 §4.1).
    expect(new Set(outcomes.map((o) => o.answer?.id))).toEqual(new Set([0]));
    // The pool keeps ≤ 100 in flight on a connection (unbound's http-max-streams is 100 too) and ≤ 4 connections: 300 take 3.
    expect(new Set(outcomes.map((o) => o.req.trace.connectionId)).size).toBe(3);
  });

  test('strict: a URL host the certificate does not name is refused, typed, and says why', async () => {
    const pool = dohPool(`https://wrong.test:${unbound.dohPort}/dns-query`, auth);
    const o = await resolve(pool, request('n1.test'));
    expect(o.err?.code).toBe('DOTSTUB_CERTIFICATE');
    expect(o.err?.message).toMatch(/not valid for wrong\.test/);
  });

  test('an SPKI pin authenticates on its own; a wrong pin is refused as interception', async () => {
    const pinned = dohPool(unbound.dohUrl as string, { mode: 'strict', ca: [] }, [unbound.pki.serverPin]);
    const ok = await resolve(pinned, request('n7.test'));
    expect(firstA(ok.answer)).toBe(expectedA(7));
    const wrong = dohPool(unbound.dohUrl as string, auth, [Buffer.alloc(32, 7).toString('base64')]);
    const refused = await resolve(wrong, request('n7.test'));
    expect(refused.err?.code).toBe('DOTSTUB_PIN_MISMATCH');
  });
});

describe('DoH against a server of our own', () => {
  const auth: AuthPolicy = { mode: 'strict', ca: [] };
  const strictTestCa = (): AuthPolicy => ({ mode: 'strict', ca: [testCa] });
  let testCa = '';
  beforeAll(async () => {
    const { testPki } = await import('../../../test-support/certs.js');
    testCa = testPki().caPem;
  });

  test('the request is a POST of application/dns-message to the URL path, ID 0, padded to 128 octets (RFC 8467)', async () => {
    const server = await startFakeDohServer();
    try {
      const pool = dohPool(server.url, strictTestCa());
      const o = await resolve(pool, request('n1.test'));
      expect(o.err).toBeNull();
      const [got] = server.received;
      expect(got?.headers[':method']).toBe('POST');
      expect(got?.headers[':path']).toBe('/dns-query');
      expect(got?.headers[':authority']).toBe(`dns.test:${server.port}`);
      expect(got?.headers['content-type']).toBe('application/dns-message');
      expect(got?.headers.accept).toBe('application/dns-message');
      expect(got?.body.readUInt16BE(0)).toBe(0);
      expect((got?.body.length ?? 1) % 128).toBe(0);
      const opt = dnsPacket.decode(got?.body as Buffer).additionals?.find((r) => r.type === 'OPT');
      expect(opt && 'options' in opt ? opt.options.some((x) => x.code === 12) : false).toBe(true);
    } finally {
      await server.close();
    }
  });

  test('a slow name does not hold up the names behind it: answers come back out of order', async () => {
    const server = await startFakeDohServer({ behaviour: (n): DohBehaviour => (n === 'slow.test' ? { kind: 'answer', delayMs: 300 } : { kind: 'answer' }) });
    try {
      const pool = dohPool(server.url, strictTestCa());
      const slow = resolve(pool, request('slow.test'));
      const fast = await Promise.all(Array.from({ length: 20 }, (_, i) => resolve(pool, request(`f${i}.test`))));
      const s = await slow;
      expect(s.err).toBeNull();
      expect(fast.every((f) => f.err === null && f.at < s.at)).toBe(true);
      expect(new Set([s, ...fast].map((o) => o.req.trace.connectionId)).size).toBe(1);
    } finally {
      await server.close();
    }
  });

  test('HTTP status, stream reset and a wrong question each give a typed error at once; the session carries on', async () => {
    const server = await startFakeDohServer({
      behaviour: (n): DohBehaviour =>
        n === 'busy.test'
          ? { kind: 'status', status: 503 }
          : n === 'reset.test'
            ? { kind: 'reset', code: http2.constants.NGHTTP2_INTERNAL_ERROR }
            : n === 'liar.test'
              ? { kind: 'wrong-question' }
              : { kind: 'answer', address: '192.0.2.9' },
    });
    try {
      const pool = dohPool(server.url, strictTestCa());
      const started = performance.now();
      const [busy, reset, liar, fine] = await Promise.all(['busy.test', 'reset.test', 'liar.test', 'ok.test'].map((n) => resolve(pool, request(n))));
      expect(busy?.err?.code).toBe('DOTSTUB_HTTP_STATUS');
      expect(busy?.err?.message).toMatch(/HTTP 503/);
      expect(reset?.err?.code).toBe('DOTSTUB_HTTP_STREAM');
      expect(liar?.err?.code).toBe('DOTSTUB_QUESTION_MISMATCH');
      expect(firstA(fine?.answer ?? null)).toBe('192.0.2.9');
      // No deadline was waited for.
      expect(performance.now() - started).toBeLessThan(700);
      expect(new Set([busy, reset, liar, fine].map((o) => o?.req.trace.connectionId)).size).toBe(1);
      expect(pool.connections.length).toBe(1);
    } finally {
      await server.close();
    }
  });

  test('GOAWAY from the server closes the session as a server close; the next query opens a new one', async () => {
    const server = await startFakeDohServer();
    try {
      const pool = dohPool(server.url, strictTestCa());
      const closes: string[] = [];
      pool.on('close', (e) => closes.push(e.reason));
      const first = await resolve(pool, request('a.test'));
      server.goaway();
      await waitForEvent(pool, 'close', () => closes.length > 0, 2000, 'the session closed');
      expect(closes).toEqual(['server-close']);
      const second = await resolve(pool, request('b.test'));
      expect(second.err).toBeNull();
      expect(second.req.trace.connectionId).not.toBe(first.req.trace.connectionId);
    } finally {
      await server.close();
    }
  });

  test('GOAWAY with queries in flight: the ones the server did not take are retried on a new session and answered', async () => {
    const server = await startFakeDohServer({ behaviour: (): DohBehaviour => ({ kind: 'answer', delayMs: 200 }) });
    try {
      const pool = dohPool(server.url, strictTestCa());
      await resolve(pool, request('warm.test'));
      const pending = Array.from({ length: 5 }, (_, i) => resolve(pool, request(`g${i}.test`)));
      await new Promise((r) => setTimeout(r, 50));
      // Last stream ID 1 (the warm-up's): the five (streams 3–11) were not processed (RFC 9113 §6.8).
      server.goaway(1);
      const outcomes = await Promise.all(pending);
      expect(outcomes.map((o) => o.err)).toEqual([null, null, null, null, null]);
      expect(outcomes.every((o) => o.req.trace.attempts === 2)).toBe(true);
      expect(new Set(outcomes.map((o) => o.req.trace.connectionId)).size).toBe(1);
    } finally {
      await server.close();
    }
  });

  test('strict: an impostor certificate is refused before a single byte of HTTP is written', async () => {
    const impostor = await startImpostorTls();
    try {
      const pool = dohPool(`https://dns.test:${impostor.port}/dns-query`, strictTestCa());
      const o = await resolve(pool, request('n1.test'));
      expect(o.err?.code).toBe('DOTSTUB_CERTIFICATE');
      expect(o.err?.message).toMatch(/issued by an unknown CA/);
      // Once the impostor has seen its one connection close, whatever it was sent has arrived.
      await waitFor(() => impostor.closedConnections() === 1, 2000, 'the refused connection closed');
      expect(impostor.connections()).toBe(1);
      expect(impostor.bytesReceived()).toBe(0);
    } finally {
      await impostor.close();
    }
  });

  test('opportunistic: an impostor is used, recorded as unverified, and never yields a ticket to resume', async () => {
    const server = await startFakeDohServer({ impostor: true });
    try {
      const pool = dohPool(server.url, { mode: 'opportunistic', ca: [testCa] });
      const opened: HandshakeInfo[] = [];
      pool.on('open', (e) => opened.push(e));
      let tickets = 0;
      pool.on('open', (e) => pool.connections.find((c) => c.id === e.connectionId)?.on('session', () => tickets++));
      const o = await resolve(pool, request('n1.test'));
      expect(o.err).toBeNull();
      expect(opened[0]?.verified).toBe(false);
      expect(opened[0]?.authError).toMatch(/unknown CA/);
      // TLS 1.3 tickets come right after the handshake, ahead of any answer on the same stream: one would be
      // counted by now.
      expect(tickets).toBe(0);
    } finally {
      await server.close();
    }
  });

  test('no trust anchor for the private CA: strict refuses', async () => {
    const server = await startFakeDohServer();
    try {
      const o = await resolve(dohPool(server.url, auth), request('n1.test'));
      expect(o.err?.code).toBe('DOTSTUB_CERTIFICATE');
      expect(server.received).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

/**
 * The control client against a real HTTP server on 127.0.0.1:0 that applies
 * the control server's gates (Bearer token, Host, Origin on changes) and
 * records what it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ControlClient } from './client.js';
import { failureWords, type ControlError } from '../../proxy/control/api-client/errors.js';
import { API_ERRORS } from '../../proxy/error-codes.js';

const TOKEN = 'test-token_0123456789';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

async function startServer(handler: Handler): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const own = `http://${req.headers.host ?? ''}`;
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, 401, { error: { code: 'unauthorized', message: 'missing or wrong token' } });
      if (req.method !== 'GET' && req.headers.origin !== own) return json(res, 403, { error: { code: 'forbidden_origin', message: 'changes need the dashboard Origin' } });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  onTestFinished(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function client(url: string, timeoutMs = 2000): ControlClient {
  const c = new ControlClient({ baseUrl: url, token: TOKEN, timeoutMs });
  onTestFinished(() => c.close());
  return c;
}

const status = { state: 'private', reason: 'authenticated TLS', since: 1, leaves: 'only TLS', resolver: { id: 'quad9' } };

describe('ControlClient', () => {
  it('GETs with the Bearer token and no Origin, and returns the parsed view', async () => {
    const { url, seen } = await startServer((_req, res) => json(res, 200, status));
    const got = await client(url).status();
    expect(got).toEqual(status);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url).toBe('/api/status');
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]?.headers.origin).toBeUndefined();
    expect(seen[0]?.headers.host).toBe(new URL(url).host);
  });

  it('sends changes as JSON with the control origin as Origin', async () => {
    const { url, seen } = await startServer((req, res, body) => {
      expect(req.headers['content-type']).toBe('application/json');
      json(res, 200, { ...status, resolver: { id: (JSON.parse(body) as { id: string }).id } });
    });
    const c = client(url);
    const after = await c.setActiveResolver('cloudflare');
    expect(after.resolver.id).toBe('cloudflare');
    expect(seen[0]).toMatchObject({ method: 'PUT', url: '/api/resolvers/active', body: '{"id":"cloudflare"}' });
    expect(seen[0]?.headers.origin).toBe(url);
    expect(c.origin).toBe(url);
  });

  it('turns an ApiError answer into ControlError with the API code, hint and fields', async () => {
    const { url } = await startServer((_req, res) =>
      json(res, 400, {
        error: {
          code: 'validation',
          message: 'pool size is wrong',
          hint: 'fix the field',
          field: 'poolSize',
          fields: { poolSize: 'pool size must be at most 16 connections' },
          fieldCodes: { poolSize: 'out_of_range' },
        },
      }),
    );
    await expect(client(url).updateSettings({ poolSize: 99 })).rejects.toMatchObject({
      code: 'validation',
      status: 400,
      message: 'pool size is wrong',
      hint: 'fix the field',
      field: 'poolSize',
      fields: { poolSize: 'pool size must be at most 16 connections' },
      fieldCodes: { poolSize: 'out_of_range' },
    });
  });

  it('an error answer from an older proxy (no hint) gets the hint of its code; one that is not an ApiError is http', async () => {
    const { url } = await startServer((req, res) =>
      req.url === '/api/status' ? json(res, 409, { error: { code: 'resolver_in_use', message: 'quad9 is in use' } }) : (res.writeHead(502), res.end('bad gateway')),
    );
    const c = client(url);
    const inUse = await c.status().catch((err: unknown) => err as ControlError);
    expect(inUse).toMatchObject({ code: 'resolver_in_use', status: 409 });
    expect(failureWords(inUse)).toBe(`quad9 is in use. ${API_ERRORS.resolver_in_use.hint}`);
    await expect(c.metrics()).rejects.toMatchObject({ code: 'http', status: 502 });
  });

  it('reports a wrong token as unauthorized', async () => {
    const { url } = await startServer((_req, res) => json(res, 200, status));
    const c = new ControlClient({ baseUrl: url, token: 'wrong' });
    onTestFinished(() => c.close());
    await expect(c.status()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('times out when the server does not answer', async () => {
    const { url } = await startServer(() => {
      /* never answers */
    });
    const started = Date.now();
    await expect(client(url, 300).resolvers()).rejects.toMatchObject({ code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('says unreachable when nothing listens', async () => {
    const { url, close } = await startServer((_req, res) => json(res, 200, status));
    await close(); // keep its port, with nothing listening
    await expect(client(url).status()).rejects.toMatchObject({ code: 'unreachable' });
  });

  it('refuses an answer that is not JSON', async () => {
    const { url } = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<p>hello</p>');
    });
    await expect(client(url).metrics()).rejects.toMatchObject({ code: 'bad_response' });
  });

  it('stops on an AbortSignal and on close()', async () => {
    const { url } = await startServer(() => {
      /* never answers */
    });
    const c = client(url, 5000);
    const ac = new AbortController();
    const p = c.status(ac.signal);
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
    const q = c.settings();
    setTimeout(() => c.close(), 50);
    await expect(q).rejects.toMatchObject({ code: 'aborted' });
    await expect(c.status()).rejects.toMatchObject({ code: 'aborted' });
  });

  it('validates its options and says what to use instead', () => {
    expect(() => new ControlClient({ baseUrl: 'http://example.com:5380', token: TOKEN })).toThrow(/loopback/);
    expect(() => new ControlClient({ baseUrl: 'https://127.0.0.1:5380', token: TOKEN })).toThrow(/http:\/\//);
    expect(() => new ControlClient({ baseUrl: 'http://127.0.0.1:5380/api', token: TOKEN })).toThrow(/origin only/);
    expect(() => new ControlClient({ baseUrl: 'not a url', token: TOKEN })).toThrow(/ready file/);
    expect(() => new ControlClient({ baseUrl: 'http://127.0.0.1:5380', token: '' })).toThrow(/token/);
    expect(() => new ControlClient({ baseUrl: 'http://127.0.0.1:5380', token: TOKEN, timeoutMs: 0 })).toThrow(RangeError);
    expect(new ControlClient({ baseUrl: 'http://[::1]:5380', token: 'a b'.replace(' ', '') }).dashboardUrl).toBe('http://[::1]:5380/#token=ab');
  });

  describe('stream', () => {
    function sseServer(onStream: (res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
      return startServer((req, res) => {
        if (req.url !== '/api/stream') return json(res, 404, { error: { code: 'not_found', message: 'no' } });
        res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8' });
        res.flushHeaders();
        onStream(res);
      });
    }

    it('delivers batches split across writes and ends quietly on close()', async () => {
      const { url, seen } = await sseServer((res) => {
        const text = `retry: 2000\n\nevent: batch\ndata: ${JSON.stringify({ at: 1, queries: [], skipped: 0, events: [], inFlight: 0 })}\n\n: ping\n\nevent: batch\ndata: ${JSON.stringify({ at: 2, queries: [], skipped: 3, events: [], inFlight: 1 })}\n\n`;
        // Cut the text in three at awkward places, written apart in time.
        res.write(text.slice(0, 20));
        setTimeout(() => res.write(text.slice(20, 70)), 20);
        setTimeout(() => res.write(text.slice(70)), 40);
      });
      const batches: number[] = [];
      let opened = false;
      const got2 = new Promise<void>((resolve) => {
        const h = client(url).stream({
          onOpen: () => (opened = true),
          onBatch: (b) => {
            batches.push(b.at);
            if (b.at === 2) {
              h.close();
              resolve();
            }
          },
        });
        onTestFinished(() => h.close());
        void h.ended.then((err) => expect(err).toBeUndefined());
      });
      await got2;
      expect(opened).toBe(true);
      expect(batches).toEqual([1, 2]);
      expect(seen[0]?.headers.accept).toBe('text/event-stream');
      expect(seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    });

    it('ends with an error when the server ends the stream, and on idle', async () => {
      const { url } = await sseServer((res) => setTimeout(() => res.end(), 20));
      const a = client(url).stream({ onBatch: () => undefined });
      expect(((await a.ended) as ControlError).code).toBe('unreachable');

      const quiet = await sseServer(() => {
        /* headers, then nothing */
      });
      const started = Date.now();
      const b = client(quiet.url).stream({ onBatch: () => undefined, idleTimeoutMs: 200 });
      expect(((await b.ended) as ControlError).code).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('ends with the API error when the stream is refused', async () => {
      const { url } = await sseServer(() => undefined);
      const c = new ControlClient({ baseUrl: url, token: 'wrong' });
      onTestFinished(() => c.close());
      const h = c.stream({ onBatch: () => undefined });
      expect(await h.ended).toMatchObject({ code: 'unauthorized', status: 401 });
    });
  });
});

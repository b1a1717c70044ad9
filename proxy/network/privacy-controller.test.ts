/**
 * The privacy controller against a fake upstream (an emitter speaking the
 * ManagedUpstream events): what the user's status says, and when the
 * controller re-opens a connection, decided without any socket.
 */
import { EventEmitter } from 'node:events';
import { expect, test } from 'vitest';
import { defaultConfig } from '../config/proxy-config.js';
import { parseResolverArg } from '../config/resolvers.js';
import { ConnectFailedError } from '../errors.js';
import type { StubProxyEvents } from '../events.js';
import type { ManagedOpen, ManagedUpstream, ManagedUpstreamEvents, UpstreamSnapshot } from '../upstream/managed.js';
import { PrivacyController } from './privacy-controller.js';

const resolver = parseResolverArg('127.0.0.1:853#dns.test');

class FakeUpstream extends EventEmitter<ManagedUpstreamEvents> implements ManagedUpstream {
  readonly name = 'Fake';
  readonly resolver = resolver;
  readonly transport = null;
  readonly lastChange = null;
  warms = 0;
  resolve(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }
  destroy(): void {}
  warm(): void {
    this.warms++;
  }
  retryNow(): 'started' {
    return 'started';
  }
  networkChanged(): void {}
  snapshot(): UpstreamSnapshot {
    return { connections: [], open: false, verified: false };
  }
}

function setup(lastQueryAt = () => Date.now()) {
  const out = new EventEmitter<StubProxyEvents>();
  const upstream = new FakeUpstream();
  const controller = new PrivacyController({ out, config: () => defaultConfig(resolver), lastQueryAt, upstream });
  controller.started();
  return { out, upstream, controller };
}

const opened: ManagedOpen = { transport: 'dot', connectionId: 1, address: '127.0.0.1', resumed: false, verified: true, authError: undefined, tlsVersion: 'TLSv1.3', cipher: 'x', handshakeMs: 3, burst: false };
const closed = { transport: 'dot' as const, connectionId: 1, reason: 'idle', failed: 0, error: undefined, lastClosed: true };

test('an authenticated open is private; a failure of the carrying side blocks, the other side stays silent', () => {
  const { upstream, controller, out } = setup();
  const states: string[] = [];
  out.on('state', (s) => states.push(s.state));
  upstream.emit('open', opened);
  expect(controller.state.state).toBe('private');
  const error = new ConnectFailedError('port 853 refused');
  const failure = { transport: 'doh' as const, address: '127.0.0.1', error, retryInMs: 1000, afterMs: 1, attempts: [], message: error.message };
  upstream.emit('connect-failed', { ...failure, speaks: false });
  expect(controller.state.state).toBe('private');
  expect(controller.network).toMatchObject({ transport: 'doh', detail: 'port 853 refused' });
  upstream.emit('connect-failed', { ...failure, transport: 'dot', speaks: true });
  expect(controller.state).toMatchObject({ state: 'blocked' });
  expect(states).toEqual(['private', 'blocked']);
});

test('warm re-open while in use, at most three empty ones in a row; then idle', () => {
  const { upstream, controller } = setup();
  upstream.emit('open', opened);
  for (let i = 0; i < 3; i++) upstream.emit('close', { ...closed, queriesCarried: 0 });
  expect(upstream.warms).toBe(3);
  upstream.emit('close', { ...closed, queriesCarried: 0 });
  expect(upstream.warms).toBe(3);
  expect(controller.state.reason).toMatch(/^idle since/);
  // A connection that carried a query resets the count.
  upstream.emit('close', { ...closed, queriesCarried: 5 });
  expect(upstream.warms).toBe(4);
});

test('not in use: the last close is idle, not a re-open; events of an upstream switched away from decide nothing', () => {
  const { upstream, controller } = setup(() => Date.now() - 600_000);
  upstream.emit('open', opened);
  upstream.emit('close', { ...closed, queriesCarried: 2 });
  expect(upstream.warms).toBe(0);
  expect(controller.state.reason).toMatch(/^idle since/);
  const next = new FakeUpstream();
  controller.switched(next);
  upstream.emit('connect-failed', { transport: 'dot', address: 'x', error: new ConnectFailedError('refused'), retryInMs: 1, afterMs: 1, attempts: [], speaks: true, message: 'refused' });
  expect(controller.state.state).toBe('private');
});

test('repeated attempts failing the same way announce the state once, not once per attempt (issue 24 item 4)', () => {
  const { upstream, out } = setup();
  const states: { state: string; reason: string }[] = [];
  out.on('state', (s) => states.push({ state: s.state, reason: s.reason }));
  upstream.emit('open', opened);
  const error = new ConnectFailedError('port 853 refused');
  // Back-off grows between attempts; lookups start attempts in between: one blocked state either way.
  for (const retryInMs of [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]) {
    upstream.emit('connect-failed', { transport: 'dot', address: '127.0.0.1', error, retryInMs, afterMs: 1, attempts: [], speaks: true, message: error.message });
  }
  expect(states.map((s) => s.state)).toEqual(['private', 'blocked']);
  expect(states[1]!.reason).toContain('each lookup tries again (at most once a second)');
  expect(states[1]!.reason).not.toMatch(/retrying in/);
});

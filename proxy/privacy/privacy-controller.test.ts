/**
 * The privacy controller against a fake upstream (an emitter speaking the
 * ManagedUpstream events): what the user's status says, and when the
 * controller re-opens a connection, decided without any socket.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { defaultConfig, type ProxyConfig } from '../run/proxy-config.js';
import { parseResolverArg } from '../config/resolvers.js';
import { CertificateError, ConnectFailedError, ConnectTimeoutError } from '../errors.js';
import type { ManagedOpen, ManagedUpstream, ManagedUpstreamEvents, NetworkHint, UpstreamSnapshot } from '../upstream/managed.js';
import { CurrentNetwork } from '../network/current-network.js';
import { NetworkMemory } from '../network/network-memory.js';
import { PrivacyController, type PrivacyOptions } from './privacy-controller.js';

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
  readonly hints: NetworkHint[] = [];
  networkChanged(hint: NetworkHint = {}): void {
    this.hints.push(hint);
  }
  prefer(hint: NetworkHint): void {
    this.hints.push(hint);
  }
  snapshot(): UpstreamSnapshot {
    return { connections: [], open: false, verified: false };
  }
}

/** What the controller reads of a run's configuration, as the root gives it. */
function optionsOf(config: ProxyConfig): PrivacyOptions {
  return { mode: () => config.auth.mode, allowDegraded: () => config.allowDegraded, networkDns: () => config.networkDns, captive: config.captive, captiveNetworkDns: () => config.captive?.networkDns ?? [] };
}

/** The network we're on as the root makes it: its memory in `file` (null: none), its key given. */
function networkOn(file: string | null, key: () => string | null, gateway: () => string | null = () => null): CurrentNetwork {
  const network = new CurrentNetwork({ file, identify: () => (key() === null ? null : { key: key() as string, final: true }), gateway });
  network.start();
  return network;
}

function setup(lastQueryAt = () => Date.now()) {
  const upstream = new FakeUpstream();
  const controller = new PrivacyController({ options: optionsOf(defaultConfig(resolver)), lastQueryAt, upstream, network: networkOn(null, () => null) });
  controller.started();
  // It speaks on its own emitter.
  const out = controller;
  return { out, upstream, controller };
}

const opened: ManagedOpen = { transport: 'dot', connectionId: 1, address: '127.0.0.1', resumed: false, verified: true, authError: null, tlsVersion: 'TLSv1.3', cipher: 'x', keyGroup: 'X25519', classicalOnly: null, handshakeMs: 3, burst: false };
const closed = { transport: 'dot' as const, connectionId: 1, address: '127.0.0.1', reason: 'server-close' as const, failed: 0, error: undefined, wasOpen: true, lastClosed: true };

test('an authenticated open is private; a failure of the carrying side blocks, the other side stays silent', () => {
  const { upstream, controller, out } = setup();
  const states: string[] = [];
  out.on('state', (s) => states.push(s.state));
  upstream.emit('open', opened);
  expect(controller.state.state).toBe('private');
  const error = new ConnectFailedError('port 853 refused');
  const failure = { transport: 'doh' as const, resolverId: 'r', consecutive: 1, address: '127.0.0.1', error, retryInMs: 1000, offline: false, nat64Prefix: null, afterMs: 1, attempts: [], message: error.message };
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

test('in use, a connection our own idle timer closed stays closed: only one the server closed is re-opened', () => {
  const { upstream, controller } = setup();
  upstream.emit('open', opened);
  upstream.emit('close', { ...closed, reason: 'idle', queriesCarried: 4 });
  expect(upstream.warms).toBe(0);
  expect(controller.state.reason).toMatch(/^idle since/);
  upstream.emit('open', opened);
  upstream.emit('close', { ...closed, reason: 'server-close', queriesCarried: 4 });
  expect(upstream.warms).toBe(1);
});

test('not in use: the last close is idle, not a re-open; events of an upstream switched away from decide nothing', () => {
  const { upstream, controller } = setup(() => Date.now() - 600_000);
  upstream.emit('open', opened);
  upstream.emit('close', { ...closed, queriesCarried: 2 });
  expect(upstream.warms).toBe(0);
  expect(controller.state.reason).toMatch(/^idle since/);
  const next = new FakeUpstream();
  controller.switched(next);
  upstream.emit('connect-failed', { transport: 'dot', resolverId: 'r', consecutive: 1, address: 'x', error: new ConnectFailedError('refused'), retryInMs: 1, offline: false, nat64Prefix: null, afterMs: 1, attempts: [], speaks: true, message: 'refused' });
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
    upstream.emit('connect-failed', { transport: 'dot', resolverId: 'r', consecutive: 1, address: '127.0.0.1', error, retryInMs, offline: false, nat64Prefix: null, afterMs: 1, attempts: [], speaks: true, message: error.message });
  }
  expect(states.map((s) => s.state)).toEqual(['private', 'blocked']);
  expect(states[1]!.reason).toContain('each lookup tries again (at most once a second)');
  expect(states[1]!.reason).not.toMatch(/retrying in/);
});

test('per-network memory: what worked is remembered under the network key; a rejoin of a network where 853 was dropped starts on DoH, another network on DoT', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-memory-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'networks.json');
  let key = 'cafe';
  const upstream = new FakeUpstream();
  const network = networkOn(file, () => key, () => '10.0.0.1');
  const controller = new PrivacyController({ options: optionsOf(defaultConfig(resolver)), lastQueryAt: () => Date.now(), upstream, network });
  controller.started();
  expect(upstream.hints).toEqual([{}]); // nothing known about the café yet
  const error = new ConnectTimeoutError('port 853 timed out after 2500 ms');
  upstream.emit('connect-failed', { transport: 'dot', resolverId: 'r', consecutive: 1, address: '127.0.0.1', error, retryInMs: 5000, offline: false, nat64Prefix: null, afterMs: 2500, attempts: [], speaks: true, message: error.message });
  upstream.emit('open', { ...opened, transport: 'doh' });
  expect(new NetworkMemory(file).get('cafe')).toMatchObject({ label: 'gateway 10.0.0.1', worked: 'doh', port853: { kind: 'dropped', classification: 'NET_DROPPED' } });

  key = 'home';
  network.moved();
  upstream.emit('open', opened);
  key = 'cafe';
  network.moved();
  expect(upstream.hints).toEqual([{}, {}, { startOn: 'doh' }]);
  expect(new NetworkMemory(file).get('home')).toMatchObject({ worked: 'dot' });
  expect(new NetworkMemory(file).get('home')?.port853).toBeUndefined();

  // DoT authenticates at the café again (the network changed its mind): the memory is corrected, the next rejoin starts on DoT.
  upstream.emit('open', opened);
  expect(new NetworkMemory(file).get('cafe')).toMatchObject({ worked: 'dot' });
  expect(new NetworkMemory(file).get('cafe')?.port853).toBeUndefined();
  network.moved();
  expect(upstream.hints.at(-1)).toEqual({});
});

test('an intercepted 853 is never a reason to start on DoH (ladder step 2)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-memory-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'networks.json');
  const upstream = new FakeUpstream();
  const network = networkOn(file, () => 'hotel');
  const controller = new PrivacyController({ options: optionsOf(defaultConfig(resolver)), lastQueryAt: () => Date.now(), upstream, network });
  controller.started();
  const error = new CertificateError('certificate for dns.test was issued by an unknown CA', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY');
  upstream.emit('connect-failed', { transport: 'dot', resolverId: 'r', consecutive: 1, address: '127.0.0.1', error, retryInMs: 5000, offline: false, nat64Prefix: null, afterMs: 3, attempts: [], speaks: true, message: error.message });
  upstream.emit('open', { ...opened, transport: 'doh' });
  expect(new NetworkMemory(file).get('hotel')).toMatchObject({ worked: 'doh', port853: { kind: 'intercepted' } });
  expect(new NetworkMemory(file).get('hotel')?.label).toMatch(/^network seen first on \d{4}-\d\d-\d\d$/);
  network.moved();
  expect(upstream.hints.at(-1)).toEqual({});
});

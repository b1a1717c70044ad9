/**
 * The app in-process (proxy/app.ts: proxy, control service and server, as
 * the CLI starts them) against a test upstream, plus a raw HTTP client that can send any Host,
 * Origin or body (fetch can't set Host).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startApp } from '../proxy/app.js';
import type { ControlServer, ControlSocketOptions } from '../proxy/control/server.js';
import type { ControlService } from '../proxy/control/service.js';
import { defaultConfig, type CaptiveConfig, type ProxyConfig } from '../proxy/run/proxy-config.js';
import { poolOptionsFrom } from '../proxy/run/run-config.js';
import type { StubProxy } from '../proxy/dotstub.js';
import type { ListenAddress } from '../proxy/listen/address.js';
import { ResolverStore } from '../proxy/config/resolver-store.js';
import { parseResolverArg, type ResolverSpec } from '../proxy/config/resolvers.js';
import { SettingsStore, type Settings } from '../proxy/run/settings.js';
import type { SystemDnsManager } from '../proxy/system-dns/manager.js';
import { testPki } from './certs.js';
import { removeOnExit } from './temp.js';

export interface ControlHarness {
  readonly proxy: StubProxy;
  readonly service: ControlService;
  readonly server: ControlServer;
  readonly settingsStore: SettingsStore;
  readonly resolverStore: ResolverStore;
  /** DNS port (UDP and TCP) on 127.0.0.1. */
  readonly dnsPort: number;
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  readonly configDir: string;
  stop(): Promise<void>;
}

export interface ControlHarnessOptions {
  /** Used when the config dir holds no saved active resolver (or `force`). */
  readonly resolverArg?: string;
  readonly forceResolver?: boolean;
  readonly configDir?: string;
  readonly streamIntervalMs?: number;
  readonly dashboardDir?: string;
  readonly overrides?: Partial<Settings>;
  /**
   * The answer cache (off unless asked for): these tests measure the
   * resolver path (per-resolver latency, reuse, switches), which repeated
   * names would otherwise answer from the cache.
   */
  readonly cache?: boolean;
  /** Captive-portal handling (off unless given: no probe leaves a test by default). */
  readonly captive?: CaptiveConfig;
  /** Connect at start (default true); false: the first query connects (nothing happens before the test asks). */
  readonly warm?: boolean;
  /** Reconnect when this machine's network changes (default true); false with `warm: false`: nothing connects unless a query asks (a resolver on the Internet). */
  readonly watchNetwork?: boolean;
  /** The system-DNS takeover the service offers (--system-dns), given the proxy's DNS port. */
  readonly systemDns?: (dnsPort: number) => Promise<SystemDnsManager>;
  /** "Test resolvers" scope: tests measure only resolvers on this machine (the presets point at the Internet). */
  readonly measureScope?: 'all' | 'local';
  /** Also serve the API on this Unix socket (--control-socket). */
  readonly socket?: ControlSocketOptions;
  /** Where the control API listens (default: a free port, as --control 127.0.0.1:0). `explicit: false`: as the default port is. */
  readonly controlPort?: { readonly port: number; readonly explicit: boolean; readonly anyPort?: boolean };
  /** The app's lines for the user (the CLI prints them on stderr). */
  readonly log?: (line: string) => void;
  /** Runs before the proxy starts, as the CLI's log does (startDotstub's observe). */
  readonly observe?: (proxy: StubProxy) => void;
  /** Routing by name owner, read from the test's own files (off unless given, as DOTSTUB_NAME_ROUTING=off keeps it in every rig). */
  readonly names?: ProxyConfig['names'];
  /** Per-network memory (off unless given). */
  readonly networkMemory?: ProxyConfig['networkMemory'];
}

/** A config dir of the test's own, removed when the test process ends. */
export function tempConfigDir(): string {
  return removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-config-')));
}

export async function startControl(options: ControlHarnessOptions): Promise<ControlHarness> {
  const configDir = options.configDir ?? tempConfigDir();
  const settingsStore = new SettingsStore(configDir);
  const resolverStore = new ResolverStore(configDir);
  const effective = { ...settingsStore.load(), ...options.overrides };
  resolverStore.load();
  const explicit = options.resolverArg !== undefined ? parseResolverArg(options.resolverArg) : undefined;
  const resolver: ResolverSpec | undefined = options.forceResolver ? explicit : (resolverStore.persistedActive ?? explicit);
  if (!resolver) throw new Error('startControl: no resolver');
  const systemDns = options.systemDns;
  const app = await startApp({
    config: defaultConfig(resolver, {
      listen: [{ host: '127.0.0.1', port: 0 }],
      auth: { mode: effective.mode, ca: [testPki().caPem] },
      padding: effective.padding,
      recordNames: effective.recordNames,
      cache: options.cache ? {} : null,
      captive: options.captive ?? null,
      warm: options.warm ?? true,
      watchNetwork: options.watchNetwork ?? true,
      pool: poolOptionsFrom(effective),
      names: options.names ?? null,
      networkMemory: options.networkMemory ?? null,
    }),
    control: {
      place: {
        host: '127.0.0.1',
        port: options.controlPort?.port ?? 0,
        explicit: options.controlPort?.explicit ?? true,
        ...(options.controlPort?.anyPort ? { anyPort: true } : {}),
        ...(options.dashboardDir ? { dashboardDir: options.dashboardDir } : {}),
        ...(options.socket ? { socket: options.socket } : {}),
      },
      effective,
      settings: settingsStore,
      resolvers: resolverStore,
      configDir,
      ...(systemDns ? { systemDns: (bound: readonly ListenAddress[]) => systemDns(bound[0]?.port ?? 0) } : {}),
      measureScope: options.measureScope ?? 'local',
      service: { streamIntervalMs: options.streamIntervalMs ?? 100 },
    },
    ...(options.log ? { log: options.log } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
  });
  const [bound] = app.bound;
  const { service, server, token } = app;
  if (!bound || !service || !server || !token) throw new Error('startControl: the app started without DNS or control');
  return {
    proxy: app.proxy,
    service,
    server,
    settingsStore,
    resolverStore,
    dnsPort: bound.port,
    // '' when the API is served on the socket only (its port held by another program).
    url: server.loopbackUrl ?? '',
    origin: server.loopbackUrl ?? '',
    token,
    configDir,
    stop: () => app.stop(1000),
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  json<T = unknown>(): T;
}

export interface RawRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string is sent as is; anything else as JSON with Content-Type application/json. */
  readonly body?: unknown;
  readonly timeoutMs?: number;
}

/** One HTTP request with exactly the headers given (plus Content-Length). */
export function rawRequest(baseUrl: string, pathname: string, req: RawRequest = {}): Promise<RawResponse> {
  const u = new URL(pathname, baseUrl);
  const headers: Record<string, string> = { ...req.headers };
  let payload: Buffer | undefined;
  if (req.body !== undefined) {
    payload = Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    if (typeof req.body !== 'string') headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const r = http.request(
      { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port, path: u.pathname + u.search, method: req.method ?? 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T });
        });
        res.on('error', reject);
      },
    );
    r.setTimeout(req.timeoutMs ?? 10_000, () => r.destroy(new Error(`${req.method ?? 'GET'} ${pathname} timed out`)));
    r.on('error', reject);
    if (payload) r.end(payload);
    else r.end();
  });
}

/** An authenticated API client: Bearer token, and our Origin on changes (as the dashboard sends). */
export function apiClient(h: { url: string; token: string; origin: string }) {
  const call = (method: string, pathname: string, body?: unknown): Promise<RawResponse> =>
    rawRequest(h.url, pathname, {
      method,
      body,
      headers: { authorization: `Bearer ${h.token}`, ...(method === 'GET' ? {} : { origin: h.origin }) },
    });
  return {
    get: (p: string) => call('GET', p),
    post: (p: string, body?: unknown) => call('POST', p, body),
    put: (p: string, body?: unknown) => call('PUT', p, body),
    del: (p: string) => call('DELETE', p),
  };
}

export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Reads an SSE stream; `events` fills as batches arrive. */
export function openStream(h: { url: string; token: string }): Promise<{ events: SseEvent[]; bytes: () => number; close: () => void; status: number }> {
  const u = new URL('/api/stream', h.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: u.hostname, port: u.port, path: u.pathname, headers: { authorization: `Bearer ${h.token}` }, agent: false }, (res) => {
      const events: SseEvent[] = [];
      let buf = '';
      let bytes = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        buf += chunk;
        let idx: number;
        while ((idx = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (data.length > 0) events.push({ event, data: data.join('\n') });
        }
      });
      res.on('error', () => undefined);
      resolve({ events, bytes: () => bytes, close: () => req.destroy(), status: res.statusCode ?? 0 });
    });
    req.on('error', reject);
  });
}

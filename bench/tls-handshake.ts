/**
 * `npm run bench:tls`: what the runtime change (Node 20 → the Node 24 the
 * package ships, OpenSSL 3.0 → 3.5) does to dotstub's TLS handshakes with
 * Debian's unbound (test-support/unbound.ts: DoT on loopback, the test PKI).
 *
 * Per runtime:
 * - What goes on the wire, from a capture on loopback (tcpdump, read by
 *   tshark): the ClientHello's size (TLS record, bytes; TCP segments it
 *   took), the groups offered and the key shares sent, the group the server
 *   chose, and whether it asked for another key share (HelloRetryRequest).
 *   Captured twice: the bench's client (bench/tls-handshake-client.mjs,
 *   dotstub's TLS options), and the real proxy (bin/dotstub.js with the
 *   proxy's Node flags) making its first connection.
 * - How long a handshake takes: median, p90 of `--rounds` × `--per-round`
 *   full handshakes and as many resumed ones (TCP connect + TLS, loopback),
 *   the runtimes taking turns round by round so machine noise hits both.
 *
 * Loopback only, bounded (defaults: 5 rounds of 40, ~15 s). Needs unbound,
 * tcpdump and tshark (.ci/run installs them) and root or CAP_NET_RAW for the
 * capture. Writes bench/results/tls-handshake.{json,md} (or --out DIR).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { PROXY_NODE_FLAGS } from '../proxy/runtime/node-flags.js';
import { NODE_RUNTIME, unpackedNode } from '../scripts/node-runtime.mjs';
import { freePort, startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { wholeNumberFlags } from './args.js';
import { benchMeta, ROOT } from './lab.js';
import { median as medianOf, percentile } from './stats.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const USAGE = 'usage: npm run bench:tls -- [--rounds N] [--per-round N] [--out DIR]';
const int = wholeNumberFlags(USAGE);

/** TLS named groups by code point (IANA), as tshark prints them in fields. */
const GROUPS: Readonly<Record<number, string>> = {
  0x0017: 'secp256r1',
  0x0018: 'secp384r1',
  0x0019: 'secp521r1',
  0x001d: 'X25519',
  0x001e: 'X448',
  0x0100: 'ffdhe2048',
  0x0101: 'ffdhe3072',
  0x0102: 'ffdhe4096',
  0x0103: 'ffdhe6144',
  0x0104: 'ffdhe8192',
  0x11eb: 'SecP256r1MLKEM768',
  0x11ec: 'X25519MLKEM768',
  0x11ed: 'SecP384r1MLKEM1024',
  0x0200: 'MLKEM512',
  0x0201: 'MLKEM768',
  0x0202: 'MLKEM1024',
};
/** A ServerHello with this random is a HelloRetryRequest (RFC 8446 §4.1.3). */
const HRR_RANDOM = 'cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c';

interface Runtime {
  readonly name: string;
  readonly node: string;
}

interface Wire {
  /** Per connection (client port), in order. */
  readonly connections: {
    readonly clientHelloBytes: number[];
    readonly clientHelloSegments: number[];
    readonly offered: string[];
    readonly keyShares: string[];
    readonly chosen: string | null;
    readonly helloRetry: boolean;
    readonly resumedByPsk: boolean;
  }[];
}

interface Timing {
  readonly full: number[];
  readonly resumed: number[];
  readonly resumedOk: number;
  readonly key: unknown;
  readonly protocol: string;
  readonly openssl: string;
  readonly version: string;
  readonly defaultEcdhCurve: string;
}

const groupName = (v: string): string => {
  const n = Number(v);
  return GROUPS[n] ?? `0x${n.toString(16).padStart(4, '0')}`;
};
const list = (field: string | undefined): string[] => (field ? field.split(',').filter(Boolean) : []);

/**
 * Starts tcpdump on loopback for `port`; resolves once it is capturing.
 * --immediate-mode: otherwise the kernel hands packets over a block at a time
 * (up to a second late), and what is still in the ring when tcpdump is
 * stopped never reaches the file.
 */
async function capture(file: string, port: number): Promise<() => Promise<void>> {
  const child = spawn('tcpdump', ['-i', 'lo', '--immediate-mode', '-U', '-n', '-w', file, `tcp port ${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`tcpdump exited (${code}): ${err.trim()}`)));
  });
  return async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await exited;
  };
}

/** What a capture shows, connection by connection. */
function readWire(file: string, serverPort: number): Wire {
  const fields = (filter: string, f: string[]): string[][] =>
    execFileSync('tshark', ['-r', file, '-o', `tls.keys_list:`, '-d', `tcp.port==${serverPort},tls`, '-Y', filter, '-T', 'fields', '-E', 'separator=\t', '-E', 'occurrence=a', '-E', 'aggregator=,', ...f.flatMap((x) => ['-e', x])], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
  const byPort = new Map<string, Wire['connections'][number]>();
  const conn = (port: string): Wire['connections'][number] => {
    let c = byPort.get(port);
    if (!c) {
      c = { clientHelloBytes: [], clientHelloSegments: [], offered: [], keyShares: [], chosen: null, helloRetry: false, resumedByPsk: false };
      byPort.set(port, c);
    }
    return c;
  };
  const hellos = fields('tls.handshake.type == 1', ['tcp.srcport', 'tls.record.length', 'tcp.segment.count', 'tls.handshake.extensions_supported_group', 'tls.handshake.extensions_key_share_group', 'tls.handshake.extensions.psk.identity.identity_length']);
  for (const [port = '', recordLen = '0', segments = '', offered, shares] of hellos) {
    const c = conn(port);
    // The record's 5-byte header plus its body: the ClientHello as it goes on the wire, before TCP/IP headers.
    c.clientHelloBytes.push(Number(list(recordLen)[0]) + 5);
    c.clientHelloSegments.push(Number(segments || 1));
    if (c.offered.length === 0) c.offered.push(...list(offered).map(groupName));
    c.keyShares.length = 0;
    c.keyShares.push(...list(shares).map(groupName));
  }
  const servers = fields('tls.handshake.type == 2', ['tcp.dstport', 'tls.handshake.random', 'tls.handshake.extensions_key_share_group', 'tls.handshake.extensions.psk.identity.selected']);
  for (const [port = '', random = '', share, psk] of servers) {
    const c = byPort.get(port);
    if (!c) continue;
    const retry = random.replaceAll(':', '').toLowerCase() === HRR_RANDOM;
    Object.assign(c, { helloRetry: c.helloRetry || retry, chosen: list(share).map(groupName)[0] ?? c.chosen, resumedByPsk: psk !== undefined && psk !== '' });
  }
  return { connections: [...byPort.values()] };
}

function runClient(rt: Runtime, unbound: UnboundServer, full: number, resumed: number): Timing {
  const out = execFileSync(
    rt.node,
    [path.join(import.meta.dirname, 'tls-handshake-client.mjs'), JSON.stringify({ host: '127.0.0.1', port: unbound.port, servername: unbound.pki.authName, caFile: unbound.pki.caFile, full, resumed })],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 },
  );
  const r = JSON.parse(out) as { node: string; openssl: string; defaultEcdhCurve: string; full: { ms: number; key: unknown; protocol: string }[]; resumed: { ms: number; resumed: boolean }[] };
  return {
    full: r.full.map((x) => x.ms),
    resumed: r.resumed.filter((x) => x.resumed).map((x) => x.ms),
    resumedOk: r.resumed.filter((x) => x.resumed).length,
    key: r.full[0]?.key,
    protocol: r.full[0]?.protocol ?? '',
    openssl: r.openssl,
    version: r.node,
    defaultEcdhCurve: r.defaultEcdhCurve,
  };
}

/** The real proxy on `rt`, as the launcher starts it, until its first upstream connection is open; returns that log line. */
async function proxyFirstConnection(rt: Runtime, unbound: UnboundServer, dir: string): Promise<string> {
  const port = await freePort();
  const configDir = fs.mkdtempSync(path.join(dir, 'config-'));
  const child: ChildProcess = spawn(
    rt.node,
    [...PROXY_NODE_FLAGS, path.join(ROOT, 'bin/dotstub.js'), '--listen', `127.0.0.1:${port}`, '--resolver', unbound.resolverArg, '--ca', unbound.pki.caFile, '--no-control', '--no-portal-check', '--cache-size', '0', '--config-dir', configDir],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DOTSTUB_NAME_ROUTING: 'off' } },
  );
  const exited = new Promise((r) => child.once('exit', r));
  try {
    let err = '';
    const opened = new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const line = /^dotstub: connection \d+ to .* open \(.*\)$/m.exec(err);
        if (line) resolve(line[0]);
      });
      child.once('exit', (code) => reject(new Error(`dotstub exited (${code}): ${err.trim()}`)));
    });
    // A lookup, once it listens, in case it opens no connection before the first query.
    const sock = dgram.createSocket('udp4');
    const ask = setInterval(() => sock.send(dnsPacket.encode({ type: 'query', id: 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'n1.test' }] }), port, '127.0.0.1'), 200);
    try {
      return await Promise.race([opened, new Promise<string>((_, reject) => setTimeout(() => reject(new Error(`dotstub opened no connection in 15 s: ${err.trim()}`)), 15_000))]);
    } finally {
      clearInterval(ask);
      sock.close();
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (xs: readonly number[]): number => medianOf(xs);
const p90 = (xs: readonly number[]): number => percentile([...xs].sort((a, b) => a - b), 90);

function describeWire(w: Wire): { clientHello: string; offered: string; keyShares: string; chosen: string; helloRetry: boolean } {
  const first = w.connections[0];
  if (!first) throw new Error('the capture holds no TLS handshake (is tcpdump allowed to capture here?)');
  return {
    clientHello: `${first.clientHelloBytes.join(' + ')} B in ${first.clientHelloSegments.join(' + ')} TCP segment(s)`,
    offered: first.offered.join(', '),
    keyShares: first.keyShares.join(', '),
    chosen: first.chosen ?? '?',
    helloRetry: w.connections.some((c) => c.helloRetry),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, 'per-round': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    log(USAGE);
    return;
  }
  const rounds = int(values.rounds, 'rounds', 5, 1, 50);
  const perRound = int(values['per-round'], 'per-round', 40, 1, 500);
  const outDir = path.resolve(values.out ?? path.join(ROOT, 'bench/results'));
  if (!fs.existsSync(path.join(ROOT, 'dist/proxy/cli.js'))) throw new Error('dist/proxy/cli.js is missing: npm run build:proxy');

  const runtimes: Runtime[] = [
    { name: `host ${process.version}`, node: process.execPath },
    { name: `shipped v${NODE_RUNTIME.version}`, node: path.join(unpackedNode(undefined, log), 'bin/node') },
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-bench-tls-'));
  const unbound = await startUnbound({ names: 10 });
  const v = execFileSync('/usr/sbin/unbound', ['-V'], { encoding: 'utf8' });
  const unboundVersion = /^Version (\S+)/m.exec(v)?.[1] ?? '?';
  const unboundSsl = /^Linked libs: .*?(OpenSSL [\d.]+)/m.exec(v)?.[1] ?? '?';
  try {
    const wire: Record<string, { client: ReturnType<typeof describeWire>; proxy: ReturnType<typeof describeWire>; proxyLine: string }> = {};
    for (const rt of runtimes) {
      log(`${rt.name}: capturing the bench client's handshakes, then the proxy's first connection`);
      const clientPcap = path.join(dir, `client-${Object.keys(wire).length}.pcap`);
      let stop = await capture(clientPcap, unbound.port);
      runClient(rt, unbound, 2, 2);
      await stop();
      const proxyPcap = path.join(dir, `proxy-${Object.keys(wire).length}.pcap`);
      stop = await capture(proxyPcap, unbound.port);
      const proxyLine = await proxyFirstConnection(rt, unbound, dir);
      await stop();
      wire[rt.name] = { client: describeWire(readWire(clientPcap, unbound.port)), proxy: describeWire(readWire(proxyPcap, unbound.port)), proxyLine };
    }

    const timing: Record<string, Timing[]> = Object.fromEntries(runtimes.map((r) => [r.name, []]));
    for (let i = 0; i < rounds; i++) {
      for (const rt of i % 2 === 0 ? runtimes : [...runtimes].reverse()) {
        (timing[rt.name] as Timing[]).push(runClient(rt, unbound, perRound, perRound));
      }
      log(`round ${i + 1}/${rounds} done`);
    }

    const meta = benchMeta(`unbound ${unboundVersion} (${unboundSsl}), loopback`);
    const rows = runtimes.map((rt) => {
      const ts = timing[rt.name] as Timing[];
      const full = ts.flatMap((t) => t.full);
      const resumed = ts.flatMap((t) => t.resumed);
      const w = wire[rt.name] as (typeof wire)[string];
      return {
        runtime: rt.name,
        openssl: ts[0]?.openssl,
        defaultEcdhCurve: ts[0]?.defaultEcdhCurve,
        protocol: ts[0]?.protocol,
        keyExchange: ts[0]?.key,
        fullMs: { n: full.length, median: median(full), p90: p90(full) },
        resumedMs: { n: resumed.length, of: ts.length * perRound, median: median(resumed), p90: p90(resumed) },
        wire: w,
      };
    });
    const json = { meta, rounds, perRound, rows };
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, 'tls-handshake.json'), `${JSON.stringify(json, null, 2)}\n`);
    const f = (n: number): string => n.toFixed(2);
    const md = [
      '# TLS handshakes with unbound: Node 20 vs the Node 24 dotstub ships',
      '',
      `${meta.date}, commit ${meta.commit}, ${meta.cores} × ${meta.cpuModel}; upstream ${meta.upstream}. ${rounds} rounds × ${perRound} full and ${perRound} resumed handshakes per runtime, the runtimes taking turns; time from tls.connect to 'secureConnect' (TCP connect included). Reproduce: \`npm run bench:tls -- --rounds ${rounds} --per-round ${perRound}\`.`,
      '',
      '| runtime | OpenSSL | ClientHello (bench client) | ClientHello (dotstub) | groups offered | key shares sent | server chose | HelloRetryRequest | full handshake ms, median (p90) | resumed ms, median (p90) |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows.map(
        (r) =>
          `| ${r.runtime} | ${r.openssl} | ${r.wire.client.clientHello} | ${r.wire.proxy.clientHello} | ${r.wire.proxy.offered} | ${r.wire.proxy.keyShares} | ${r.wire.proxy.chosen} | ${r.wire.proxy.helloRetry || r.wire.client.helloRetry ? 'yes' : 'no'} | ${f(r.fullMs.median)} (${f(r.fullMs.p90)}) | ${f(r.resumedMs.median)} (${f(r.resumedMs.p90)}), ${r.resumedMs.n}/${r.resumedMs.of} resumed |`,
      ),
      '',
      // On loopback the MSS is ~65 KB; on an Ethernet path (MTU 1500, TCP timestamps on) it is 1448.
      ...rows.map((r) => {
        const bytes = Number(/^(\d+) B/.exec(r.wire.proxy.clientHello)?.[1]);
        return `- ${r.runtime}: dotstub's ClientHello of ${bytes} B takes ${Math.ceil(bytes / 1448)} TCP segment(s) on a path with a 1500-byte MTU (MSS 1448).`;
      }),
      ...rows.map((r) => `- ${r.runtime}: the proxy said "${r.wire.proxyLine.replace(/^dotstub: /, '')}"; Node reports the key exchange as ${JSON.stringify(r.keyExchange)} (tls.DEFAULT_ECDH_CURVE ${r.defaultEcdhCurve}).`),
      '',
    ].join('\n');
    fs.writeFileSync(path.join(outDir, 'tls-handshake.md'), md);
    process.stdout.write(md);
  } finally {
    await unbound.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(`bench:tls: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});

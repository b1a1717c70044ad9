#!/usr/bin/env node
// What post-quantum key agreement costs a connection (issue 33, item 4): the
// ClientHello's size and the full handshake's time, X25519MLKEM768 (the
// packaged runtime's own offer) against classical X25519 (what dotstub
// offers on a network that lost a post-quantum ClientHello:
// proxy/upstream/connection/key-agreement.ts), with a TLS 1.3 server that
// has ML-KEM (Node's own, test certificate P-256), on loopback and through a
// relay that adds a fixed delay each way.
//
// Runs on the packaged runtime (Node 24, OpenSSL 3.5: scripts/node-runtime.mjs)
// whatever node starts it. Bounded: `--rounds` × `--per-round` handshakes per
// group and path (default 5 × 40 on loopback; a tenth of that through the
// delay), the groups taking turns. Prints a Markdown report.
//
//   npm run bench:pq -- [--rounds 5] [--per-round 40] [--delay-ms 20] [--out bench/results/pq-handshake.md]
import { Buffer } from 'node:buffer';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { NODE_RUNTIME, unpackedNode } from '../scripts/node-runtime.mjs';

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};

function offersPostQuantum() {
  try {
    tls.createSecureContext({ ecdhCurve: 'X25519MLKEM768' });
    return true;
  } catch {
    return false;
  }
}

if (!offersPostQuantum()) {
  const node = path.join(unpackedNode(undefined, (m) => console.error(m)), 'bin/node');
  console.error(`OpenSSL ${process.versions.openssl} here has no ML-KEM: running on the packaged Node ${NODE_RUNTIME.version} (${node})`);
  const r = spawnSync(node, [import.meta.filename, ...args], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const ROUNDS = Math.min(Number(arg('rounds', 5)), 50);
const PER_ROUND = Math.min(Number(arg('per-round', 40)), 500);
const DELAY_MS = Math.min(Number(arg('delay-ms', 20)), 500);
const OUT = arg('out', null);
const MSS = 1448; // a 1500-byte MTU, TCP timestamps on
const GROUPS = [
  { label: 'X25519MLKEM768 (post-quantum hybrid; the library offers it first, with an X25519 share beside it)', ecdhCurve: undefined },
  { label: 'X25519 (classical; ecdhCurve X25519:P-256)', ecdhCurve: 'X25519:P-256' },
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-pq-bench-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const sh = (argv) => execFileSync('openssl', argv, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
sh(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'key.pem']);
sh(['req', '-x509', '-new', '-key', 'key.pem', '-sha256', '-days', '1', '-subj', '/CN=dns.test', '-out', 'cert.pem']);

const server = tls.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')), minVersion: 'TLSv1.3' }, (s) => {
  s.on('error', () => {});
  s.end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));

/** A relay in front of the server: counts each connection's first TLS record (the ClientHello) and delays each chunk `oneWayMs`. */
async function relay(oneWayMs) {
  const hellos = [];
  const later = (fn) => (oneWayMs > 0 ? setTimeout(fn, oneWayMs) : fn());
  const front = net.createServer((c) => {
    const back = net.connect(server.address().port, '127.0.0.1');
    let head = Buffer.alloc(0);
    let counted = false;
    c.on('data', (d) => {
      if (!counted) {
        head = Buffer.concat([head, d]);
        if (head.length >= 5 && head.length >= 5 + head.readUInt16BE(3)) {
          counted = true;
          hellos.push(5 + head.readUInt16BE(3));
        }
      }
      later(() => back.writable && back.write(d));
    });
    back.on('data', (d) => later(() => c.writable && c.write(d)));
    for (const [a, b] of [[c, back], [back, c]]) {
      a.on('error', () => {});
      a.on('close', () => later(() => b.destroy()));
    }
  });
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  return { port: front.address().port, hellos, close: () => front.close() };
}

/** One full handshake: ms from tls.connect to 'secureConnect' (TCP connect included), the group agreed, the server's bytes until then. */
function handshake(port, ecdhCurve) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const raw = net.connect(port, '127.0.0.1');
    const s = tls.connect({ socket: raw, servername: 'dns.test', rejectUnauthorized: false, ...(ecdhCurve ? { ecdhCurve } : {}) }, () => {
      const ms = performance.now() - t0;
      const group = s.getEphemeralKeyInfo().name;
      const serverBytes = raw.bytesRead;
      s.destroy();
      resolve({ ms, group, serverBytes });
    });
    s.on('error', reject);
    setTimeout(() => reject(new Error('handshake took over 5 s')), 5_000).unref();
  });
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function measure(oneWayMs, rounds, perRound) {
  const r = await relay(oneWayMs);
  const out = GROUPS.map(() => ({ ms: [], groups: new Set(), hellos: new Set(), serverBytes: [] }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, g] of GROUPS.entries()) {
      for (let n = 0; n < perRound; n++) {
        const before = r.hellos.length;
        const h = await handshake(r.port, g.ecdhCurve);
        out[i].ms.push(h.ms);
        out[i].groups.add(h.group);
        out[i].serverBytes.push(h.serverBytes);
        if (r.hellos.length > before) out[i].hellos.add(r.hellos[r.hellos.length - 1]);
      }
    }
  }
  r.close();
  return out;
}

const paths = [
  { label: 'loopback', oneWayMs: 0, rounds: ROUNDS, perRound: PER_ROUND },
  { label: `loopback + ${DELAY_MS} ms each way (relay)`, oneWayMs: DELAY_MS, rounds: ROUNDS, perRound: Math.max(1, Math.round(PER_ROUND / 10)) },
];
const rows = [];
for (const p of paths) {
  const res = await measure(p.oneWayMs, p.rounds, p.perRound);
  for (const [i, g] of GROUPS.entries()) {
    const m = res[i];
    const hello = [...m.hellos];
    rows.push(
      `| ${p.label} | ${g.label} | ${[...m.groups].join(', ')} | ${hello.join(', ')} B in ${hello.map((h) => Math.ceil(h / MSS)).join(', ')} segment(s) | ${quantile(m.serverBytes, 0.5)} B | ${m.ms.length} | ${quantile(m.ms, 0.5).toFixed(2)} (${quantile(m.ms, 0.9).toFixed(2)}) |`,
    );
  }
}
server.close();

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {
  /* not a checkout */
}
const cpu = os.cpus();
const report = [
  '# Post-quantum key agreement: ClientHello size and handshake time per group',
  '',
  `${new Date().toISOString()}, commit ${commit}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}; Node ${process.version} (OpenSSL ${process.versions.openssl}), client and server (Node's own TLS, P-256 test certificate, TLS 1.3). Full handshakes, time from tls.connect to 'secureConnect' (TCP connect included); the groups take turns, ${ROUNDS} rounds. The ClientHello is the first TLS record the server's relay read; segments at MSS ${MSS} (a 1500-byte MTU). Reproduce: \`npm run bench:pq -- --rounds ${ROUNDS} --per-round ${PER_ROUND} --delay-ms ${DELAY_MS}\`.`,
  '',
  '| path | offered | agreed | ClientHello | server → client until done | handshakes | ms, median (p90) |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
];
const text = report.join('\n');
console.log(text);
if (OUT) fs.writeFileSync(OUT, text);

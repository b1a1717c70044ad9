// The floor for the low-rate bench (issue 32, item 5): the least a Node
// process can do to carry one query at a time from UDP to DNS-over-TLS and
// back. One verified TLS connection to the resolver, kept open; each query
// gets a fresh ID on it and goes out with its 2-octet length; each answer gets
// its ID back and returns to the asker. No parsing, no cache, no padding, no
// records, no timers. What it costs at 20 q/s is what Node itself costs on this
// path: the bench prints dotstub's latency and CPU against it, beside the C
// stubs', so a ratio that the floor cannot reach either is seen as such.
//
//   node bench/floor-dot.mjs PORT HOST:DOTPORT AUTHNAME CAFILE
//   (listens on 127.0.0.1:PORT over UDP; prints "ready" once connected)
import { Buffer } from 'node:buffer';
import dgram from 'node:dgram';
import fs from 'node:fs';
import tls from 'node:tls';

const [portArg, target, servername, caFile] = process.argv.slice(2);
const port = Number(portArg);
const [host, dotPort] = (target ?? '').split(':');
if (!Number.isInteger(port) || port <= 0 || port > 65535 || !host || !dotPort || !servername || !caFile) {
  process.stderr.write('usage: node bench/floor-dot.mjs PORT HOST:DOTPORT AUTHNAME CAFILE\n');
  process.exit(2);
}
const ca = fs.readFileSync(caFile);
const sock = dgram.createSocket('udp4');
/** Our ID on the connection -> who asked, and with which ID. */
const waiting = new Map();
let nextId = 0;
let conn;
let connecting;
let pending = Buffer.alloc(0);

function connect() {
  return new Promise((resolve, reject) => {
    const c = tls.connect({ host, port: Number(dotPort), servername, ca, noDelay: true }, () => resolve(c));
    c.once('error', reject);
    c.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        const w = waiting.get(msg.readUInt16BE(0));
        if (!w) continue;
        waiting.delete(msg.readUInt16BE(0));
        msg.writeUInt16BE(w.id, 0);
        sock.send(msg, w.port, w.address);
      }
    });
    c.on('close', () => {
      if (conn === c) conn = undefined;
    });
  });
}

sock.on('message', async (msg, rinfo) => {
  if (msg.length < 12) return;
  const id = (nextId = (nextId + 1) & 0xffff);
  waiting.set(id, { id: msg.readUInt16BE(0), port: rinfo.port, address: rinfo.address });
  const out = Buffer.allocUnsafe(msg.length + 2);
  out.writeUInt16BE(msg.length, 0);
  msg.copy(out, 2);
  out.writeUInt16BE(id, 2);
  // One connection: queries that come while it is being made wait for the same one.
  if (!conn) conn = await (connecting ??= connect().finally(() => (connecting = undefined))).catch(() => undefined);
  conn?.write(out);
});

conn = await connect();
sock.bind(port, '127.0.0.1', () => process.stdout.write('ready\n'));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => { conn?.destroy(); sock.close(() => process.exit(0)); });

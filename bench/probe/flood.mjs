// Sends malformed DNS datagrams to 127.0.0.1:PORT for SECONDS (bounded): random bytes, a
// broken question, a label running off the end, counts that lie. Prints how many were sent.
import dgram from 'node:dgram';
import { Buffer } from 'node:buffer';
import crypto from 'node:crypto';
import { setImmediate } from 'node:timers';
const [port, seconds] = [Number(process.argv[2]), Number(process.argv[3] ?? 10)];
const socks = Array.from({ length: 4 }, () => dgram.createSocket('udp4'));
const until = Date.now() + seconds * 1000;
let sent = 0;
function make(i) {
  const kind = i % 4;
  if (kind === 0) return crypto.randomBytes(12 + (i % 500));
  const b = Buffer.alloc(12 + 30 + (i % 200));
  b.writeUInt16BE(i & 0xffff, 0); b.writeUInt16BE(0x0100, 2); b.writeUInt16BE(1, 4);
  if (kind === 1) { crypto.randomFillSync(b, 12); }          // broken question
  if (kind === 2) { b[12] = 63; b.fill(0x61, 13); }          // label running off the end
  if (kind === 3) { b.writeUInt16BE(5, 4); b.writeUInt16BE(3, 6); crypto.randomFillSync(b, 12); } // counts lie
  return b;
}
function pump() {
  if (Date.now() >= until) { for (const s of socks) s.close(); console.log(`sent ${sent}`); return; }
  for (let k = 0; k < 200; k++) { socks[k & 3].send(make(sent), port, '127.0.0.1'); sent++; }
  setImmediate(pump);
}
pump();

#!/usr/bin/env node
// A tiny UDP+TCP DNS server for the system-DNS lab (run inside the lab's
// namespaces): answers every A query with one fixed address and prints one
// line per query ("Q <name> <type>") so the test can count who was asked.
// Usage: node lab-dns-server.mjs HOST PORT ANSWER_ADDRESS [LOG_FILE]
// (LOG_FILE: the same lines appended to a file, for readers inside the lab.)
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import { Buffer } from 'node:buffer';
import packet from 'dns-packet';

const [host, portText, answer, logFile] = process.argv.slice(2);
const port = Number(portText);

function respond(buf) {
  const q = packet.decode(buf);
  const question = q.questions?.[0];
  if (!question) return null;
  process.stdout.write(`Q ${question.name} ${question.type}\n`);
  if (logFile) fs.appendFileSync(logFile, `Q ${question.name} ${question.type}\n`);
  const answers = question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 1, data: answer }] : [];
  return packet.encode({ id: q.id, type: 'response', flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE, questions: q.questions, answers });
}

const family = host.includes(':') ? 'udp6' : 'udp4';
const udp = dgram.createSocket(family);
udp.on('message', (msg, rinfo) => {
  try {
    const out = respond(msg);
    if (out) udp.send(out, rinfo.port, rinfo.address);
  } catch {
    /* malformed: ignore */
  }
});
const tcp = net.createServer((sock) => {
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const len = buf.readUInt16BE(0);
      const out = respond(buf.subarray(2, 2 + len));
      buf = buf.subarray(2 + len);
      if (out) {
        const frame = Buffer.alloc(2);
        frame.writeUInt16BE(out.length);
        sock.write(Buffer.concat([frame, out]));
      }
    }
  });
  sock.on('error', () => {});
});
let ready = 0;
const up = () => {
  if (++ready === 2) process.stdout.write(`READY ${host} ${port}\n`);
};
udp.bind(port, host, up);
tcp.listen(port, host, up);
process.on('SIGTERM', () => process.exit(0));

// The serving half of the labs' small DNS servers (lab-dns-server.mjs,
// lab-zone-server.mjs, and the framing and the answer of lab-dot-server.mjs):
// UDP and TCP (two-octet framing) on HOST:PORT, each message handed to
// `respond` (a query's bytes → an answer's bytes, or null for none);
// malformed input is ignored. Prints "READY HOST PORT" once both listen;
// exits on SIGTERM.
import dgram from 'node:dgram';
import net from 'node:net';
import { Buffer } from 'node:buffer';
import packet from 'dns-packet';

/** The answer the fixed-address servers give a decoded query: its A question gets `address` (TTL 1), any other type none; `flags` adds to RD and RA. */
export function fixedAnswer(q, address, flags = 0) {
  const question = q.questions?.[0];
  const answers = question?.type === 'A' ? [{ type: 'A', name: question.name, ttl: 1, data: address }] : [];
  return packet.encode({ id: q.id, type: 'response', flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | flags, questions: q.questions, answers });
}

/** A stream socket (TCP, or TLS once decrypted) speaking two-octet framed DNS (RFC 1035 §4.2.2, RFC 7858): each message to `respond`, its answer framed back. */
export function serveStream(sock, respond) {
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const len = buf.readUInt16BE(0);
      let out = null;
      try {
        out = respond(buf.subarray(2, 2 + len));
      } catch {
        /* malformed: ignore */
      }
      buf = buf.subarray(2 + len);
      if (out) {
        const frame = Buffer.alloc(2);
        frame.writeUInt16BE(out.length);
        sock.write(Buffer.concat([frame, out]));
      }
    }
  });
  sock.on('error', () => {});
}

export function serveDns(host, port, respond) {
  const udp = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (msg, rinfo) => {
    try {
      const out = respond(msg);
      if (out) udp.send(out, rinfo.port, rinfo.address);
    } catch {
      /* malformed: ignore */
    }
  });
  const tcp = net.createServer((sock) => serveStream(sock, respond));
  let ready = 0;
  const up = () => {
    if (++ready === 2) process.stdout.write(`READY ${host} ${port}\n`);
  };
  udp.bind(port, host, up);
  tcp.listen(port, host, up);
  process.on('SIGTERM', () => process.exit(0));
}

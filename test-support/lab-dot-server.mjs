#!/usr/bin/env node
// A small DNS-over-TLS server of our own (issue 33, item 4): Debian's unbound
// here is built on OpenSSL 3.0, which has no ML-KEM, so a resolver that agrees
// post-quantum key exchange has to be this one, run by a Node whose OpenSSL
// has it (the packaged runtime, Node 24 / OpenSSL 3.5). Answers every A query
// with one fixed address over TLS (two-octet framing, RFC 7858), and prints
// one line per ClientHello it reads ("HELLO <bytes>": the size of the TLS
// record that carried it) and per handshake ("TLS <version>"), so a test can
// tell which ClientHellos reached it whole.
// Usage: node lab-dot-server.mjs HOST PORT KEY_FILE CERT_FILE ANSWER_ADDRESS
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { Buffer } from 'node:buffer';
import packet from 'dns-packet';
import { fixedAnswer, serveStream } from './lab-dns-serve.mjs';

const [host, portText, keyFile, certFile, answer] = process.argv.slice(2);

const server = tls.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile), minVersion: 'TLSv1.2' }, (sock) => {
  process.stdout.write(`TLS ${sock.getProtocol()}\n`);
  serveStream(sock, (buf) => {
    const q = packet.decode(buf);
    return q.questions?.[0] ? fixedAnswer(q, answer) : null;
  });
});

// In front of it on HOST:PORT, a relay that reads the first TLS record, the
// ClientHello, whose header says how long it is (a TLS socket takes the TCP
// socket's bytes before any listener of ours could count them).
const front = net.createServer((raw) => {
  raw.on('error', () => {});
  const back = net.connect(server.address().port, '127.0.0.1');
  back.on('error', () => raw.destroy());
  raw.on('close', () => back.destroy());
  back.on('close', () => raw.destroy());
  let head = Buffer.alloc(0);
  let counted = false;
  raw.on('data', (d) => {
    if (!counted) {
      head = Buffer.concat([head, d]);
      if (head.length >= 5 && head.length >= 5 + head.readUInt16BE(3)) {
        counted = true;
        process.stdout.write(`HELLO ${5 + head.readUInt16BE(3)}\n`);
      }
    }
    back.write(d);
  });
  back.on('data', (d) => raw.write(d));
});
server.listen(0, '127.0.0.1', () => {
  front.listen(Number(portText), host, () => process.stdout.write(`READY ${host} ${portText} openssl ${process.versions.openssl}\n`));
});
process.on('SIGTERM', () => process.exit(0));

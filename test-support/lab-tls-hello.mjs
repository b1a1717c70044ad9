#!/usr/bin/env node
// A TLS server that never answers, for lab tests (run inside a lab's
// namespaces): it reads each connection's ClientHello, prints what the
// client put in it on one line ("HELLO <json>": the SNI, and the Encrypted
// Client Hello extension's outer fields when there is one), and closes the
// connection. Enough to see which name a browser sent in the clear and which
// ECH config it encrypted to; no handshake, so no certificate is needed.
// Usage: node lab-tls-hello.mjs HOST PORT
import { Buffer } from 'node:buffer';
import net from 'node:net';

const [host, portText] = process.argv.slice(2);

/** The extensions of a ClientHello handshake message (RFC 8446 section 4.1.2), by type. */
function extensions(hello) {
  let at = 4 + 2 + 32; // handshake header, legacy_version, random
  at += 1 + hello[at]; // legacy_session_id
  at += 2 + hello.readUInt16BE(at); // cipher_suites
  at += 1 + hello[at]; // legacy_compression_methods
  const end = at + 2 + hello.readUInt16BE(at);
  const found = new Map();
  for (at += 2; at + 4 <= end; ) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    found.set(type, hello.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return found;
}

/** What a test wants to know of a ClientHello: the server name in the clear, and ECH's outer fields (draft-ietf-tls-esni, extension 0xfe0d). */
function describe(hello) {
  const ext = extensions(hello);
  const sni = ext.get(0);
  const ech = ext.get(0xfe0d);
  return {
    // server_name_list: its length, then name_type 0 and the name, length-prefixed.
    sni: sni ? sni.subarray(5, 5 + sni.readUInt16BE(3)).toString('latin1') : null,
    // ECHClientHello: type (0 outer, 1 inner); an outer one: cipher suite (KDF, AEAD), config_id, enc, payload.
    ech: !ech
      ? null
      : ech[0] !== 0
        ? { type: ech[0] }
        : { type: 0, kdf: ech.readUInt16BE(1), aead: ech.readUInt16BE(3), configId: ech[5], encLength: ech.readUInt16BE(6), payloadLength: ech.readUInt16BE(8 + ech.readUInt16BE(6)) },
  };
}

const server = net.createServer((socket) => {
  let head = Buffer.alloc(0);
  socket.on('error', () => undefined);
  socket.on('data', (d) => {
    head = Buffer.concat([head, d]);
    // One TLS record, content type 22 (handshake): its length is in its header; a ClientHello fits one record.
    if (head.length < 5 || head.length < 5 + head.readUInt16BE(3)) return;
    try {
      if (head[0] !== 22 || head[5] !== 1) throw new Error(`not a ClientHello (record type ${head[0]}, message type ${head[5]})`);
      process.stdout.write(`HELLO ${JSON.stringify(describe(head.subarray(5, 5 + head.readUInt16BE(3))))}\n`);
    } catch (err) {
      process.stdout.write(`HELLO-ERROR ${String(err)}\n`);
    }
    socket.destroy();
  });
});
server.listen(Number(portText), host, () => process.stdout.write('READY\n'));
process.on('SIGTERM', () => process.exit(0));

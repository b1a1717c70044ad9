// The floor for the throughput bench (issue 32, item 3): a Node UDP server
// that does no DNS work at all. Each query comes back as its own answer with
// only the header's bits flipped (QR and RA set, RCODE NOERROR, nothing
// added), from the same kind of socket dotstub's listener uses, driven by
// the same dnsperf. What it reaches is what one Node thread reaches on this
// machine: the bench prints dotstub's CPU per query and its q/s against it.
//
//   node bench/floor-server.mjs PORT     (127.0.0.1; prints "ready" when bound)
import dgram from 'node:dgram';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  process.stderr.write('usage: node bench/floor-server.mjs PORT\n');
  process.exit(2);
}
const sock = dgram.createSocket('udp4');
sock.on('message', (msg, rinfo) => {
  if (msg.length < 12) return;
  msg[2] = (msg[2] | 0x80) & 0xf9; // QR on; AA and TC off (RD as asked)
  msg[3] = 0x80; // RA on; Z, AD, CD off; RCODE NOERROR
  sock.send(msg, rinfo.port, rinfo.address);
});
sock.bind(port, '127.0.0.1', () => process.stdout.write('ready\n'));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => sock.close(() => process.exit(0)));

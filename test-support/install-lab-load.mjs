// The install lab's load on the installed service (run inside the machine by its bundled Node):
// `node install-lab-load.mjs SECONDS RATE` asks 127.0.0.1:53 at RATE queries a second for SECONDS,
// over UDP, and every 50th over TCP: the names a desktop asks again and again (cache hits) and a
// fresh one in every fifth query (a round trip to the resolver). Prints one JSON line with what was
// sent and answered. Not shipped.
import dgram from 'node:dgram';
import net from 'node:net';
import { Buffer } from 'node:buffer';
import { clearInterval, setInterval } from 'node:timers';

const seconds = Number(process.argv[2] ?? 20);
const rate = Number(process.argv[3] ?? 500);
const POPULAR = ['who.test', 'www.example.test', 'mail.example.test', 'cdn.example.test'];

function query(id, name) {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // RD
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

const udp = dgram.createSocket('udp4');
const pending = new Set();
const r = { sent: 0, answered: 0, tcpSent: 0, tcpAnswered: 0 };
udp.on('message', (msg) => {
  const id = msg.readUInt16BE(0);
  if (pending.delete(id)) r.answered++;
});

function tcpAsk(id, name) {
  r.tcpSent++;
  const q = query(id, name);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(q.length);
  const s = net.connect(53, '127.0.0.1', () => s.end(Buffer.concat([len, q])));
  let got = Buffer.alloc(0);
  s.setTimeout(3000, () => s.destroy());
  s.on('data', (d) => {
    got = Buffer.concat([got, d]);
    if (got.length >= 4 && got.readUInt16BE(2) === id) {
      r.tcpAnswered++;
      s.destroy();
    }
  });
  s.on('error', () => {});
}

let n = 0;
const started = Date.now();
const timer = setInterval(() => {
  const due = Math.floor(((Date.now() - started) / 1000) * rate);
  while (n < due) {
    n++;
    const id = n & 0xffff;
    const name = n % 5 === 0 ? `f${n}.soak.test` : POPULAR[n % POPULAR.length];
    if (n % 50 === 0) tcpAsk(id, name);
    else {
      pending.add(id);
      r.sent++;
      udp.send(query(id, name), 53, '127.0.0.1');
    }
  }
  if (Date.now() - started >= seconds * 1000) {
    clearInterval(timer);
    setTimeout(() => {
      console.log(JSON.stringify(r));
      process.exit(0);
    }, 3000);
  }
}, 10);

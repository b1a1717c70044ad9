#!/usr/bin/env node
// What a link lab user relies on, measured across the emulated link
// (bench/link-lab.test.ts): round trips, loss and throughput. One side runs in
// the server ns, the other in the client ns; each client mode prints one JSON
// line and exits. Every mode is bounded in count and time.
//
//   node bench/link-check.mjs serve ADDR PORT
//       UDP: "e<n>" is echoed back, "s<n>" is counted (one-way loss), "c"
//       answers "c<how many distinct s<n> arrived>". TCP: a connection that
//       writes "<bytes>\n" gets that many bytes, then the end. Prints "ready".
//   node bench/link-check.mjs rtt ADDR PORT COUNT     -> {"udpMs":[...],"tcpConnectMs":[...]}
//   node bench/link-check.mjs loss ADDR PORT COUNT    -> {"sent":N,"received":M}
//   node bench/link-check.mjs rate ADDR PORT BYTES    -> {"bytes":N,"kbit":K} (the last 3/4 of the transfer, past slow start)
import { Buffer } from 'node:buffer';
import dgram from 'node:dgram';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const [mode, addr, portArg, countArg] = process.argv.slice(2);
const port = Number(portArg);
const count = Number(countArg);
const MAX = { rtt: 200, loss: 20_000, rate: 4_000_000 };

function fail(message) {
  process.stderr.write(`link-check: ${message}\n`);
  process.exit(1);
}

// No mode may outlive its bound (the server serves one test file; the lab stops it sooner).
const limitS = mode === 'serve' ? 180 : 30;
setTimeout(() => fail(`${mode} did not finish within ${limitS} s`), limitS * 1000).unref();

function serve() {
  const sinks = new Set();
  const udp = dgram.createSocket('udp4');
  udp.on('message', (msg, from) => {
    const text = msg.toString();
    if (text.startsWith('e')) udp.send(msg, from.port, from.address);
    else if (text.startsWith('s')) sinks.add(text);
    else if (text === 'c') udp.send(`c${sinks.size}`, from.port, from.address);
  });
  const tcp = net.createServer((sock) => {
    let line = '';
    sock.on('data', (d) => {
      line += d.toString();
      if (!line.includes('\n')) return;
      const bytes = Math.min(Number.parseInt(line, 10) || 0, MAX.rate);
      sock.end(Buffer.alloc(bytes, 0x61));
    });
    sock.on('error', () => undefined);
  });
  let up = 0;
  const ready = () => {
    if (++up === 2) console.log('ready');
  };
  udp.bind(port, addr, ready);
  tcp.listen(port, addr, ready);
}

/** Sends `msg` and resolves with the first datagram back that `match`es, or null after `ms`. */
function ask(sock, msg, match, ms) {
  return new Promise((resolve) => {
    const onMessage = (reply) => {
      if (!match(reply.toString())) return;
      done(reply.toString());
    };
    const t = setTimeout(() => done(null), ms);
    function done(v) {
      clearTimeout(t);
      sock.off('message', onMessage);
      resolve(v);
    }
    sock.on('message', onMessage);
    sock.send(msg, port, addr);
  });
}

async function rtt() {
  const sock = dgram.createSocket('udp4');
  const udpMs = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    if ((await ask(sock, `e${i}`, (r) => r === `e${i}`, 2000)) !== null) udpMs.push(performance.now() - t);
  }
  sock.close();
  const tcpConnectMs = [];
  for (let i = 0; i < Math.min(count, 10); i++) {
    const t = performance.now();
    await new Promise((resolve, reject) => {
      const s = net.connect(port, addr, () => {
        tcpConnectMs.push(performance.now() - t);
        s.destroy();
        resolve();
      });
      s.on('error', reject);
    });
  }
  console.log(JSON.stringify({ udpMs, tcpConnectMs }));
}

async function loss() {
  const sock = dgram.createSocket('udp4');
  // Paced in groups of 50 a millisecond apart, so no socket buffer on the way overflows:
  // what is lost is what the link lost.
  for (let i = 0; i < count; i++) {
    sock.send(`s${i}`, port, addr);
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 1));
  }
  // The link never reorders, so a count asked after the last datagram is answered after it arrived.
  // The question or its answer may be lost too: ask again.
  for (let attempt = 0; attempt < 20; attempt++) {
    const reply = await ask(sock, 'c', (r) => r.startsWith('c'), 500);
    if (reply !== null) {
      sock.close();
      console.log(JSON.stringify({ sent: count, received: Number(reply.slice(1)) }));
      return;
    }
  }
  fail('no count from the server after 20 attempts');
}

function rate() {
  const s = net.connect(port, addr, () => s.write(`${count}\n`));
  let got = 0;
  let from;
  let fromBytes = 0;
  s.on('data', (d) => {
    got += d.length;
    if (from === undefined && got >= count / 4) {
      from = performance.now();
      fromBytes = got;
    }
  });
  s.on('end', () => {
    const ms = performance.now() - (from ?? performance.now());
    console.log(JSON.stringify({ bytes: got, kbit: ms > 0 ? ((got - fromBytes) * 8) / ms : 0 }));
  });
  s.on('error', (e) => fail(e.message));
}

if (!addr || !(port > 0 && port < 65536)) fail('usage: node bench/link-check.mjs serve|rtt|loss|rate ADDR PORT [COUNT]');
if (mode === 'serve') serve();
else if (!(count > 0 && count <= (MAX[mode] ?? 0))) fail(`${mode}: COUNT must be 1..${MAX[mode] ?? '?'}`);
else if (mode === 'rtt') await rtt();
else if (mode === 'loss') await loss();
else if (mode === 'rate') rate();
else fail(`unknown mode ${mode}`);

#!/usr/bin/env node
// A paced UDP DNS load for bench/interference.ts, run inside the network
// lab's client namespace: RATE queries a second for SECONDS to 127.0.0.1:PORT,
// each for a name no earlier query asked (n<START+i>.test, modulo NAMES), so
// no cache can answer; waits TIMEOUT_MS for each answer. Prints one line per
// query when done: "<sent, ms since the epoch> <RCODE or TIMEOUT> <ms>".
// Bounded: at most RATE × SECONDS queries, and it exits TIMEOUT_MS after the last.
// Usage: node bench/udp-load.mjs PORT RATE SECONDS START NAMES TIMEOUT_MS
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import packet from 'dns-packet';

const [port, rate, seconds, start, names, timeoutMs] = process.argv.slice(2).map(Number);
if (![port, rate, seconds, start, names, timeoutMs].every((n) => Number.isFinite(n) && n >= 0) || rate <= 0 || seconds > 600) {
  process.stderr.write('usage: node bench/udp-load.mjs PORT RATE SECONDS START NAMES TIMEOUT_MS (SECONDS at most 600)\n');
  process.exit(2);
}
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const sock = dgram.createSocket('udp4');
const pending = new Map();
const results = [];
const total = Math.round(rate * seconds);
let sent = 0;

sock.on('message', (msg) => {
  let id;
  let rcode;
  try {
    const a = packet.decode(msg);
    id = a.id;
    rcode = RCODES[(a.flags ?? 0) & 0x0f] ?? `RCODE${(a.flags ?? 0) & 0x0f}`;
    if (rcode === 'NOERROR' && (a.answers ?? []).length === 0) rcode = 'NODATA';
  } catch {
    return;
  }
  const p = pending.get(id);
  if (!p) return;
  pending.delete(id);
  clearTimeout(p.timer);
  results.push(`${p.sentAt} ${rcode} ${(performance.now() - p.t0).toFixed(1)}`);
});

function send() {
  const i = sent++;
  const id = i & 0xffff;
  const name = `n${(start + i) % names}.test`;
  const wire = packet.encode({ type: 'query', id, flags: packet.RECURSION_DESIRED, questions: [{ type: 'A', name }] });
  const p = { sentAt: Date.now(), t0: performance.now(), timer: undefined };
  p.timer = setTimeout(() => {
    pending.delete(id);
    results.push(`${p.sentAt} TIMEOUT ${timeoutMs}`);
  }, timeoutMs);
  pending.set(id, p);
  sock.send(wire, port, '127.0.0.1');
}

sock.bind(0, '127.0.0.1', () => {
  const began = performance.now();
  const tick = () => {
    // Paced by the clock, not by timer drift: catch up if a timer fired late.
    while (sent < total && sent <= ((performance.now() - began) / 1000) * rate) send();
    if (sent < total) setTimeout(tick, Math.max(1, 1000 / rate / 2));
    else
      setTimeout(() => {
        sock.close();
        process.stdout.write(`${results.sort().join('\n')}\n`);
      }, timeoutMs + 50);
  };
  tick();
});

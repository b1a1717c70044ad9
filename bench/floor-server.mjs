// The floor for the throughput bench (issue 32, item 3): a Node UDP server
// that does no DNS work at all. Each query comes back as its own answer with
// only the header's bits flipped (QR and RA set, RCODE NOERROR, nothing
// added), from the same kind of socket dotstub's listener uses, driven by
// the same dnsperf. What it reaches is what one Node thread reaches on this
// machine: the bench prints dotstub's CPU per query and its q/s against it.
//
// With THREADS above 1, that many threads (this one and worker threads) each
// bind their own socket to the port with SO_REUSEPORT (dgram's reusePort,
// Node 22.12 and later), and the kernel spreads the clients over them: what
// Node reaches on every core, the most a dotstub with a listener per thread
// could (the "floor-2" row).
//
//   node bench/floor-server.mjs PORT [THREADS]   (127.0.0.1; prints "ready" when every thread is bound)
import dgram from 'node:dgram';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

function serve(port, reusePort) {
  const sock = dgram.createSocket({ type: 'udp4', reusePort });
  sock.on('message', (msg, rinfo) => {
    if (msg.length < 12) return;
    msg[2] = (msg[2] | 0x80) & 0xf9; // QR on; AA and TC off (RD as asked)
    msg[3] = 0x80; // RA on; Z, AD, CD off; RCODE NOERROR
    sock.send(msg, rinfo.port, rinfo.address);
  });
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, '127.0.0.1', () => resolve(sock));
  });
}

if (!isMainThread) {
  await serve(workerData.port, true);
  // Bound: the main thread counts it ready. It runs until the process exits.
  parentPort.postMessage('bound');
} else {
  const port = Number(process.argv[2]);
  const threads = Number(process.argv[3] ?? 1);
  if (!Number.isInteger(port) || port <= 0 || port > 65535 || !Number.isInteger(threads) || threads < 1 || threads > 8) {
    process.stderr.write('usage: node bench/floor-server.mjs PORT [THREADS 1-8]\n');
    process.exit(2);
  }
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (threads > 1 && (major < 22 || (major === 22 && minor < 12))) {
    process.stderr.write(`floor-server: ${threads} threads need dgram's reusePort (Node 22.12 or later); this is Node ${process.versions.node}\n`);
    process.exit(2);
  }
  const sock = await serve(port, threads > 1);
  const workers = [];
  for (let i = 1; i < threads; i++) {
    const w = new Worker(new URL(import.meta.url), { workerData: { port } });
    workers.push(w);
    await new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
  }
  process.stdout.write('ready\n');
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => sock.close(() => process.exit(0)));
}

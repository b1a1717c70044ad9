/**
 * The link lab's helper servers, run in its server namespace
 * (`node --import tsx bench/lab-servers.ts ADDR WEB_PORT SLOW_PORT SLOW_MS`):
 *
 * - a page server: `/page/K?n=20` is an HTML page whose 20 images come from
 *   20 distinct hosts `pK-J.web.test` (every such name resolves to this
 *   server), so a page load costs 20 DNS lookups, as in the web study;
 * - a slow authoritative DNS server for `slow.test`: every name gets an A
 *   record after SLOW_MS, TTL 0 — the slow name among fast ones in the
 *   T-DNS head-of-line experiment.
 *
 * Stops on SIGTERM or SIGINT (the lab sends SIGTERM when it closes).
 */
import dgram from 'node:dgram';
import http from 'node:http';
import dnsPacket from 'dns-packet';

const [addr = '10.77.0.2', webPort = '80', slowPort = '5353', slowMs = '200'] = process.argv.slice(2);

// A 1×1 transparent GIF.
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const web = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const page = /^\/page\/(\w+)$/.exec(url.pathname);
  if (page) {
    const n = Math.min(100, Math.max(1, Number(url.searchParams.get('n') ?? 20) || 20));
    const imgs = Array.from({ length: n }, (_, j) => `<img src="http://p${page[1]}-${j}.web.test:${webPort}/i.gif" width="1" height="1" alt="">`).join('\n');
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><title>page ${page[1]}</title></head><body>\n${imgs}\n</body></html>\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
  res.end(GIF);
});

const slow = dgram.createSocket('udp4');
slow.on('message', (msg, rinfo) => {
  let q: dnsPacket.Packet;
  try {
    q = dnsPacket.decode(msg);
  } catch {
    return;
  }
  const question = q.questions?.[0];
  if (!question) return;
  const answers: dnsPacket.Answer[] = question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 0, data: '192.0.2.200' }] : [];
  const reply = dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: [question], answers });
  setTimeout(() => slow.send(reply, rinfo.port, rinfo.address), Number(slowMs));
});

let up = 0;
const ready = (): void => {
  if (++up === 2) process.stdout.write('ready\n');
};
web.listen(Number(webPort), addr, ready);
slow.bind(Number(slowPort), addr, ready);
const stop = (): void => {
  web.close();
  web.closeAllConnections();
  slow.close();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

/**
 * `npx tsx bench/probe-lab.ts [peers] [seconds] [node flags]`: the bench's
 * lab (one upstream unbound over DoT, the chosen peers on free loopback
 * ports) kept running for the probes in bench/probe/ (wire latency, CPU per
 * query, memory after a flood). Writes $PROBE_DIR/lab.json (default
 * /tmp/dotstub-probe) with each peer's pid and port and the query file, and
 * stops everything after `seconds` (default 600, at most 3600) or on
 * SIGINT/SIGTERM.
 */
import fs from 'node:fs';
import { writeQueryFile } from './dnsperf.js';
import { openLab, ROOT } from './lab.js';
import { PEER_NAMES, startPeer, waitReady, type PeerName } from './peers.js';

const dir = process.env.PROBE_DIR ?? '/tmp/dotstub-probe';
const peers = (process.argv[2] ?? 'dotstub').split(',');
for (const p of peers) if (!(PEER_NAMES as readonly string[]).includes(p)) throw new Error(`unknown peer "${p}"; choose from ${PEER_NAMES.join(', ')}`);
const seconds = Math.min(3600, Number(process.argv[3] ?? 600));
const nodeFlags = process.argv[4] ? process.argv[4].split(' ') : [];

fs.mkdirSync(dir, { recursive: true });
const lab = await openLab(1000);
const stop = async (): Promise<void> => {
  await lab.close();
  fs.rmSync(`${dir}/lab.json`, { force: true });
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
setTimeout(() => void stop(), seconds * 1000);
const out: Record<string, unknown> = { queryFile: writeQueryFile(lab.dir, 1000), resolver: lab.upstream.resolverArg, ca: lab.upstream.pki.caFile, self: process.pid };
for (const p of peers as PeerName[]) {
  const peer = await startPeer(p, { upstream: lab.upstream, dir: lab.dir, root: ROOT, nodeFlags });
  await waitReady(peer);
  out[p] = { pid: peer.pid, port: peer.port };
}
fs.writeFileSync(`${dir}/lab.json`, JSON.stringify(out));
process.stderr.write(`lab up: ${JSON.stringify(out)}\n`);

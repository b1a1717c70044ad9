/**
 * The stubs as the network-lab benches run them (bench/interference.ts,
 * bench/roaming.ts): inside the lab's client namespace, listening on
 * 127.0.0.1:LAB_PORT, to Debian's unbound in the server namespace over DoT;
 * dotstub strict with DoH as its fallback and every cache off, stubby and
 * unbound as a forwarder with the peers' configurations (peers.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { dotstubArgv, type Netlab, type NetlabProcess } from '../test-support/netlab.js';
import type { UnboundServer } from '../test-support/unbound.js';
import { stubbyConfig, unboundForwarderConfig } from './peers.js';

export const LAB_PORT = 5300;
const PORT = LAB_PORT;

export type LabPeer = 'dotstub' | 'stubby' | 'unbound-fwd';

export interface Running {
  readonly process: NetlabProcess;
  api(what: string): Promise<Record<string, unknown>>;
}

let configs = 0;

export async function runDotstub(lab: Netlab, unbound: UnboundServer, resolver: string): Promise<Running> {
  const n = configs++;
  const readyFile = path.join(lab.dir, `ready-${n}.json`);
  const proc = lab.client.spawn(
    dotstubArgv([
      '--listen', `127.0.0.1:${PORT}`,
      '--resolver', resolver,
      '--doh', 'https://dns.test:443/dns-query',
      '--ca', unbound.pki.caFile,
      '--strict',
      '--cache-size', '0',
      '--control', '127.0.0.1:0',
      '--config-dir', path.join(lab.dir, `config-${n}`),
      '--ready-file', readyFile,
    ]),
  );
  const deadline = Date.now() + 30_000;
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      await proc.stop();
      throw new Error(`dotstub did not start in the lab:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { control: string; token: string };
  return {
    process: proc,
    api: async (what) => {
      const r = await lab.client.exec(['curl', '-sS', '--max-time', '2', '-H', `Authorization: Bearer ${ready.token}`, `${ready.control}/api/${what}`]);
      if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    },
  };
}

export async function dig(lab: Netlab, name: string): Promise<{ rcode: string; ms: number }> {
  const t = Date.now();
  const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(PORT), '+time=5', '+tries=1', '+nocookie', name, 'A']);
  return { rcode: /status: (\w+)/.exec(r.stdout)?.[1] ?? 'TIMEOUT', ms: Number(/Query time: (\d+) msec/.exec(r.stdout)?.[1] ?? Date.now() - t) };
}

export async function startPeerInLab(lab: Netlab, unbound: UnboundServer, peer: LabPeer): Promise<NetlabProcess> {
  const to = { address: lab.addresses.server4, port: 853, authName: unbound.pki.authName, caFile: unbound.pki.caFile };
  const dir = path.join(lab.dir, `peer-${peer}-${configs++}`);
  fs.mkdirSync(dir, { recursive: true });
  let proc: NetlabProcess;
  if (peer === 'dotstub') proc = (await runDotstub(lab, unbound, `${lab.addresses.server4}:853#dns.test`)).process;
  else if (peer === 'stubby') {
    fs.writeFileSync(path.join(dir, 'stubby.yml'), stubbyConfig(dir, '127.0.0.1', PORT, to));
    proc = lab.client.spawn(['/usr/bin/stubby', '-C', path.join(dir, 'stubby.yml'), '-v', '3']);
  } else {
    fs.writeFileSync(path.join(dir, 'unbound.conf'), unboundForwarderConfig(dir, PORT, to));
    proc = lab.client.spawn(['/usr/sbin/unbound', '-d', '-c', path.join(dir, 'unbound.conf')]);
  }
  const deadline = Date.now() + 20_000;
  for (;;) {
    if ((await dig(lab, 'n0.test')).rcode === 'NOERROR') return proc;
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      await proc.stop();
      throw new Error(`${peer} did not answer in the lab:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}


/**
 * What every experiment of the paper bench gets: the link lab, the options,
 * a way to run the probe in the client namespace, peers started there on
 * their own loopback address (port 53, which glibc and Chromium need), and
 * upstreams on ports of their own (so linkemu's log tells whose segments and
 * handshakes are whose).
 */
import path from 'node:path';
import { LAB_ROOT, type LinkLab, type Upstream } from '../link-lab.js';
import { startPeer, stopAll, type Peer, type PeerName } from '../peers.js';
import type { ProbeRequest } from '../probe.js';
import { writeChart } from './chart.js';

export interface PaperOptions {
  readonly quick: boolean;
  readonly out: string;
}

export type Log = (line: string) => void;

export interface PeerSpec {
  readonly name: PeerName;
  /** Row label, e.g. "dotstub (no padding)". */
  readonly label: string;
  readonly caches?: boolean;
  readonly dotstubFlags?: readonly string[];
  /**
   * dotstub over DNS-over-HTTPS (the web study's DoH column): its upstream
   * serves DoH too, and the resolver's DoT port on the path refuses (a port
   * nothing listens on: RST at once), as on a network that blocks 853, so
   * every query goes over dotstub's DoH upstream.
   */
  readonly doh?: boolean;
}

export interface RunningPeer {
  readonly spec: PeerSpec;
  readonly peer: Peer;
  readonly upstream: Upstream;
}

export class Ctx {
  #nextPort = 8600;
  #nextAddr = 11;

  constructor(
    readonly lab: LinkLab,
    readonly o: PaperOptions,
    readonly log: Log,
  ) {}

  /** Writes a chart into the output directory (`-quick` in its name for the quick form) and returns the file to show. */
  chart(name: string, svg: string): string {
    return writeChart(this.o.out, this.o.quick ? `${name}-quick` : name, svg);
  }

  /** Runs the probe in the client ns (with `resolvConf` as its /etc/resolv.conf) and parses its JSON answer. */
  async probe<T>(req: ProbeRequest, resolvConf?: string, timeoutMs = 30 * 60_000): Promise<T> {
    const r = await this.lab.runInClient(process.execPath, ['--import', 'tsx', path.join(LAB_ROOT, 'bench', 'probe.ts')], { input: JSON.stringify(req), resolvConf, timeoutMs });
    if (r.code !== 0) throw new Error(`probe ${req.mode} failed (exit ${r.code}): ${r.stderr.trim().slice(-2000)}`);
    return JSON.parse(r.stdout) as T;
  }

  /** A DoT upstream of its own on a fresh port; plain DNS too when `plain` (on port 53 if `plain` is 53: glibc knows no other); DoH too when `doh`. */
  upstream(nodelay: boolean, plain: boolean | 53 = false, idleMs?: number, doh = false): Promise<Upstream> {
    const port = this.#nextPort++;
    return this.lab.startUpstream({ port, nodelay, plainPort: plain === 53 ? 53 : plain ? port + 1000 : undefined, dohPort: doh ? port + 2000 : undefined, idleMs });
  }

  /** Starts each peer with an upstream of its own, on 127.0.0.N:53 in the client ns. */
  async peers(specs: readonly PeerSpec[], nodelay: boolean, idleMs?: number): Promise<RunningPeer[]> {
    const out: RunningPeer[] = [];
    for (const spec of specs) {
      const upstream = await this.upstream(nodelay, false, idleMs, spec.doh ?? false);
      const host = `127.0.0.${this.#nextAddr++}`;
      if (spec.doh && (spec.name !== 'dotstub' || !upstream.dohUrl)) throw new Error(`${spec.label}: only dotstub runs over DoH here`);
      // Over DoH: the resolver's DoT port is one nothing listens on (port + 3000 in the server ns), so 853 "is blocked" from the first query.
      const via = spec.doh ? { ...upstream, resolverArg: `${upstream.host}:${upstream.port + 3000}#${upstream.pki.authName}` } : upstream;
      const peer = await startPeer(spec.name, {
        upstream: via,
        dir: this.lab.dir,
        root: LAB_ROOT,
        netns: this.lab.ns.client,
        listen: { host, port: 53 },
        caches: spec.caches ?? false,
        dotstubFlags: spec.doh ? ['--doh', upstream.dohUrl as string, ...(spec.dotstubFlags ?? [])] : spec.dotstubFlags,
      });
      this.log(`  started ${spec.label} on ${host}:53 → ${upstream.name} unbound ${spec.doh ? `${upstream.dohUrl} (DoT refused)` : `:${upstream.port}`}`);
      out.push({ spec, peer, upstream });
    }
    return out;
  }

  /** Stops `r`'s peer and starts it again as it was (the same address, configuration directory and upstream). */
  async restart(r: RunningPeer): Promise<RunningPeer> {
    const spec = r.spec;
    if (spec.doh) throw new Error(`${spec.label}: a restart over DoH is not supported here`);
    await r.peer.stop();
    const peer = await startPeer(spec.name, {
      upstream: r.upstream,
      dir: this.lab.dir,
      root: LAB_ROOT,
      netns: this.lab.ns.client,
      listen: { host: r.peer.host, port: r.peer.port },
      caches: spec.caches ?? false,
      dotstubFlags: spec.dotstubFlags,
    });
    this.log(`  restarted ${spec.label} on ${r.peer.host}:${r.peer.port}`);
    return { spec, peer, upstream: r.upstream };
  }

  /** Stops peers and their upstreams. */
  async stop(running: readonly RunningPeer[]): Promise<void> {
    for (const r of running) {
      await r.peer.stop();
      await this.lab.stopPid(r.upstream.pid);
    }
  }

  async stopEverything(): Promise<void> {
    await stopAll();
  }
}

/** Sorted finite values. */
export function sorted(values: readonly (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
}

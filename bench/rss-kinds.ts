/**
 * Where a process's resident memory is (issue 23): /proc/PID/smaps summed by
 * kind of mapping — the node binary's code and read-only data (file pages:
 * the same for every node process, reclaimable, but counted in RSS), other
 * files (libc, libstdc++), V8's heap pages and code, malloc's main heap and
 * its per-thread arenas, thread stacks. One line per call; with --every S,
 * a line every S seconds until the process exits.
 *
 *   npx tsx bench/rss-kinds.ts PID [--every 5]
 *
 * Kinds are read from the mappings' shapes, not from the program: V8 maps
 * its heap in 256 KiB pages at addresses below the 0x7f… range where the
 * kernel puts shared libraries and malloc's arenas; a thread arena is a
 * 64 MiB-aligned read-write mapping followed by its reserved rest; stacks are
 * 8 MiB read-write mappings; V8's code is the anonymous executable memory.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const KINDS = ['node code', 'node data', 'other files', 'V8 heap', 'V8 code', 'malloc main', 'malloc arenas', 'stacks', 'other anon'] as const;
type Kind = (typeof KINDS)[number];

interface Mapping {
  readonly lo: bigint;
  readonly hi: bigint;
  readonly perm: string;
  readonly name: string;
  rssKiB: number;
}

function mappings(pid: number): Mapping[] {
  const out: Mapping[] = [];
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) out.push({ lo: BigInt(`0x${head[1]}`), hi: BigInt(`0x${head[2]}`), perm: head[3] as string, name: (head[4] ?? '').trim(), rssKiB: 0 });
    else if (line.startsWith('Rss:')) (out[out.length - 1] as Mapping).rssKiB = Number(line.split(/\s+/)[1]);
  }
  return out;
}

function kindOf(m: Mapping, next: Mapping | undefined, nodeBinary: string): Kind {
  const sizeKiB = Number((m.hi - m.lo) / 1024n);
  if (m.name === nodeBinary) return m.perm.includes('x') ? 'node code' : 'node data';
  if (m.name.startsWith('/')) return 'other files';
  if (m.name === '[heap]') return 'malloc main';
  if (m.name === '[stack]') return 'stacks';
  if (m.name !== '') return 'other anon';
  if (m.perm.includes('x')) return 'V8 code';
  if (m.lo % (64n << 20n) === 0n && next?.perm === '---p' && next.lo === m.hi) return 'malloc arenas';
  if (sizeKiB === 8192 || sizeKiB === 8196) return 'stacks';
  if (m.lo < 0x7f0000000000n) return 'V8 heap';
  return 'other anon';
}

function rssKinds(pid: number): { rssMiB: number; threads: number; cpuSec: number; kinds: Record<Kind, number> } {
  const nodeBinary = fs.readlinkSync(`/proc/${pid}/exe`);
  const maps = mappings(pid);
  const kinds = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  maps.forEach((m, i) => (kinds[kindOf(m, maps[i + 1], nodeBinary)] += m.rssKiB / 1024));
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = (fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop() as string).trim().split(' ');
  return {
    rssMiB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024,
    threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0),
    cpuSec: (Number(stat[11]) + Number(stat[12])) / 100,
    kinds,
  };
}

function line(pid: number, label: string): string {
  const r = rssKinds(pid);
  const parts = KINDS.filter((k) => r.kinds[k] >= 0.05).map((k) => `${k} ${r.kinds[k].toFixed(1)}`);
  return `${label.padStart(6)} RSS ${r.rssMiB.toFixed(1)} MiB, ${r.threads} threads, CPU ${r.cpuSec.toFixed(2)} s | ${parts.join(' | ')}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { every: { type: 'string' } } });
  const pid = Number(positionals[0]);
  if (!Number.isInteger(pid) || pid <= 0) {
    console.error('usage: npx tsx bench/rss-kinds.ts PID [--every SECONDS]');
    process.exit(2);
  }
  const every = Number(values.every ?? 0);
  console.log(line(pid, '0s'));
  if (every > 0) {
    const start = Date.now();
    const timer = setInterval(() => {
      try {
        console.log(line(pid, `${Math.round((Date.now() - start) / 1000)}s`));
      } catch {
        clearInterval(timer); // the process is gone
      }
    }, every * 1000);
  }
}

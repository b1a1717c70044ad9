/**
 * `npm run bench:cache`: the answer cache's policy on its own, no sockets
 * (issue 23): hit rate and time per lookup for the workloads that decide
 * which eviction/admission policy a desktop stub wants.
 *
 * - loop: 10,000 names asked in turn, again and again (dnsperf's query file
 *   in the throughput bench): a cache smaller than the loop that evicts the
 *   least recently used gets nothing from it;
 * - zipf: 100,000 names, popularity Zipf(0.9) (web-like: a few names very
 *   often, a long tail once);
 * - zipf + scan: the same, with a one-off scan of 20,000 new names in the
 *   middle (a crawler, a mail client checking links): a good policy keeps
 *   the popular names through it.
 *
 * Answers are real messages as the resolver sends them (an A record and an
 * OPT padded to 468 octets, as unbound pads), stored the way the cache
 * stores them. Each policy runs the same sequence; 4 MiB as shipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { AnswerCache, type AnswerCacheOptions } from '../proxy/cache/answer-cache.js';
import { storedForm } from '../proxy/cache/caching-upstream.js';
import { readUpstreamAnswer } from '../proxy/dns/upstream-answer.js';
import { ROOT } from './lab.js';
import { rng } from './paper/trace.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** A resolver's answer for `name`: one A record, the OPT padded to a 468-octet message (RFC 8467's block). */
function answerFor(name: string): Buffer {
  const bare = dnsPacket.encode({
    type: 'response',
    id: 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ type: 'A', name, class: 'IN' }],
    answers: [{ type: 'A', name, ttl: 3600, class: 'IN', data: '192.0.2.1' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
  });
  const padding = Math.max(0, 468 - bare.length - 4);
  return dnsPacket.encode({
    type: 'response',
    id: 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ type: 'A', name, class: 'IN' }],
    answers: [{ type: 'A', name, ttl: 3600, class: 'IN', data: '192.0.2.1' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [{ code: 12, length: padding } as dnsPacket.PacketOpt] }],
  });
}

/** `count` draws from Zipf(s) over `n` names (inverse CDF on the cumulative weights). */
function zipf(n: number, s: number, count: number, seed: number): number[] {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1) ** s;
  const r = rng(seed);
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const x = r() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    out.push(lo);
  }
  return out;
}

interface Workload {
  readonly name: string;
  readonly sequence: readonly number[];
}

function workloads(quick: boolean): Workload[] {
  const loopNames = 10_000;
  const rounds = quick ? 3 : 6;
  const loop = Array.from({ length: loopNames * rounds }, (_, i) => i % loopNames);
  const draws = quick ? 150_000 : 400_000;
  const z = zipf(100_000, 0.9, draws, 42);
  const half = draws / 2;
  const scan = Array.from({ length: 20_000 }, (_, i) => 1_000_000 + i);
  return [
    { name: 'loop of 10,000 names', sequence: loop },
    { name: 'Zipf(0.9), 100,000 names', sequence: z },
    { name: 'Zipf(0.9) with a 20,000-name scan', sequence: [...z.slice(0, half), ...scan, ...z.slice(half)] },
  ];
}

interface Row {
  readonly workload: string;
  readonly policy: string;
  /** 'padded': answers kept as the resolver sent them; 'unpadded': as CachingUpstream keeps them (storedForm). */
  readonly stored: 'padded' | 'unpadded';
  readonly hitRate: number;
  /** Mean time per lookup (get, and set on a miss), µs. */
  readonly usPerLookup: number;
  readonly entries: number;
}

/** What the cache stores for name `i`: the resolver's padded bytes, or the form CachingUpstream keeps. */
function stored(i: number, form: Row['stored']): Buffer {
  const name = `n${i}.test`;
  const raw = answerFor(name);
  if (form === 'padded') return raw;
  return storedForm(readUpstreamAnswer(raw, { key: { name, type: 'A', class: 'IN' }, bytes: questionOf(i) }));
}

/** The question section for name `i`, as a client asks it (the cache's key, with no key bits). */
const questions = new Map<number, Buffer>();
function questionOf(i: number): Buffer {
  let q = questions.get(i);
  if (!q) questions.set(i, (q = dnsPacket.encode({ type: 'query', id: 0, questions: [{ type: 'A', name: `n${i}.test`, class: 'IN' }] }).subarray(12)));
  return q;
}

function run(w: Workload, policy: AnswerCacheOptions['admission'], form: Row['stored'], answers: Map<number, Buffer>): Row {
  const cache = new AnswerCache({ admission: policy });
  let hits = 0;
  const now = 1_000_000;
  const t0 = performance.now();
  for (const i of w.sequence) {
    const key = questionOf(i);
    const found = cache.get(key, 0, now);
    if (found && !found.stale) {
      hits++;
      continue;
    }
    let a = answers.get(i);
    if (!a) answers.set(i, (a = stored(i, form)));
    cache.set(key, 0, a, 0, cache.generation, now);
  }
  const us = ((performance.now() - t0) * 1000) / w.sequence.length;
  return { workload: w.name, policy: policy ?? 'default', stored: form, hitRate: hits / w.sequence.length, usPerLookup: Math.round(us * 100) / 100, entries: cache.entries };
}

function main(): void {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } }, strict: true });
  const quick = values.quick ?? false;
  const out = values.out ?? path.join(ROOT, 'bench', 'results');
  const answers = { padded: new Map<number, Buffer>(), unpadded: new Map<number, Buffer>() };
  const rows: Row[] = [];
  const variants = [
    ['lru', 'padded'],
    ['frequency', 'padded'],
    ['lru', 'unpadded'],
    ['frequency', 'unpadded'],
  ] as const;
  for (const w of workloads(quick)) {
    // Each variant twice: the first makes the answer bytes and warms the JIT, the second counts.
    for (const [policy, form] of variants) {
      run(w, policy, form, answers[form]);
      const r = run(w, policy, form, answers[form]);
      rows.push(r);
      log(`${w.name}, ${policy}, ${form}: ${(r.hitRate * 100).toFixed(1)} % hits, ${r.usPerLookup} µs per lookup, ${r.entries} entries`);
    }
  }
  const name = quick ? 'cache-policy-quick' : 'cache-policy';
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify(rows, null, 2)}\n`);
  fs.writeFileSync(
    path.join(out, `${name}.md`),
    [
      '# The answer cache\'s policy: hit rates and cost per lookup',
      '',
      `4 MiB as shipped; answers as unbound sends them (an A record, padded to 468 octets). \`lru\`: evict the least recently used, admit everything (dotstub before issue 23); \`frequency\`: the same eviction, but a new answer is admitted only if its name was asked more often recently than the one it would evict (a TinyLFU count-min sketch, aged by halving). \`padded\`: answers kept as the resolver sent them (before); \`unpadded\`: without the TLS hop's padding, as dotstub keeps them now. Reproduce: \`npm run bench:cache${quick ? ' -- --quick' : ''}\`.`,
      '',
      '| workload | policy | answers kept | hits | µs per lookup | entries held |',
      '| --- | --- | --- | ---: | ---: | ---: |',
      ...rows.map((r) => `| ${r.workload} | ${r.policy} | ${r.stored} | ${(r.hitRate * 100).toFixed(1)} % | ${r.usPerLookup} | ${r.entries} |`),
      '',
    ].join('\n'),
  );
  log(`wrote ${path.join(out, `${name}.md`)}`);
}

main();

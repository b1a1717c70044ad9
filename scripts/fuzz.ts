/**
 * `npm run fuzz` — dotstub's listeners under random, mutated and malformed
 * UDP and TCP traffic, with a real unbound upstream (see fuzz-lib.ts).
 *
 *   npm run fuzz                 short form: ~40k packets, a few seconds
 *   npm run fuzz -- --long       long form: 1.2M packets
 *   npm run fuzz -- --seed 42 --packets 200000 --rate 20000
 *   npm run fuzz -- --malformed --tcp 0 --rate 30000   a UDP flood of garbage only
 *
 * Exits 1 on a crash, a legitimate success rate below 99 %, or descriptors
 * not back to the baseline.
 */
import { parseArgs } from 'node:util';
import { formatReport, LONG, runFuzz, SHORT } from './fuzz-lib.js';

const { values } = parseArgs({
  options: {
    long: { type: 'boolean', default: false },
    seed: { type: 'string' },
    packets: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    json: { type: 'boolean', default: false },
    tcp: { type: 'string' },
    malformed: { type: 'boolean', default: false },
  },
});

function num(v: string | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} must be a positive whole number, got "${v}"`);
    process.exit(2);
  }
  return n;
}

const base = values.long ? LONG : SHORT;
const seed = num(values.seed, 'seed', Math.floor(Math.random() * 2 ** 31));
const report = await runFuzz({
  ...base,
  seed,
  packets: num(values.packets, 'packets', base.packets),
  udpRate: num(values.rate, 'rate', base.udpRate),
  maxSeconds: num(values.seconds, 'seconds', base.maxSeconds),
  tcpConcurrency: values.tcp === '0' ? 0 : num(values.tcp, 'tcp', base.tcpConcurrency),
  kinds: values.malformed ? 'malformed' : 'mixed',
  log: (line) => console.error(line),
});
console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
const ok = report.crashes === 0 && report.legit.rate >= 0.99 && report.fdsBackAfterSeconds >= 0;
process.exit(ok ? 0 : 1);

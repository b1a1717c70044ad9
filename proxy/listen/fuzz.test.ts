/**
 * The fuzzer's short form inside `npm test` (scripts/fuzz-lib.ts): dotstub
 * as a child process against a real unbound, random/mutated/malformed UDP and
 * TCP traffic from another process, and a legitimate client measuring what
 * it gets. A failure names its seed: replay it with `npm run fuzz -- --seed N`.
 */
import { describe, expect, test } from 'vitest';
import { formatReport, runFuzz, SHORT } from '../../scripts/fuzz-lib.js';

const seed = (): number => Math.floor(Math.random() * 2 ** 31);

describe('fuzzing the listeners', () => {
  test('a UDP flood of 15,000 fuzz datagrams/s for 10 s: a client asking every 50 ms (asking again after 1 s, as stub resolvers do) gets ≥ 98 % of its answers (the rest are figures: npm run fuzz)', { timeout: 90_000 }, async () => {
    const r = await runFuzz({ packets: 150_000, maxSeconds: 10, udpRate: 15_000, udpSockets: 8, tcpConcurrency: 0, seed: seed() });
    const report = formatReport(r);
    expect(r.crashes, report).toBe(0);
    // Enough of a flood to mean something, however loaded the machine (the rate sent is the fuzzer's figure).
    expect(r.udpDatagrams, report).toBeGreaterThan(40_000);
    expect(r.legit.sent, report).toBeGreaterThanOrEqual(100);
    expect(r.legit.rate, report).toBeGreaterThanOrEqual(0.98);
  });

  test('short form: ~40,000 fuzz packets over UDP and TCP: no crash, the legitimate client ≥ 98 % answered, descriptors back to baseline', { timeout: 90_000 }, async () => {
    const r = await runFuzz({ ...SHORT, seed: seed() });
    const report = formatReport(r);
    expect(r.crashes, report).toBe(0);
    expect(r.packets, report).toBeGreaterThan(10_000);
    expect(r.tcpConnections, report).toBeGreaterThan(100);
    expect(r.legit.rate, report).toBeGreaterThanOrEqual(0.98);
    expect(r.fdsBackAfterSeconds, report).toBeGreaterThanOrEqual(0);
    expect(r.after.fds, report).toBeLessThanOrEqual(r.before.fds);
  });
});

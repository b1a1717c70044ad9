/**
 * How runs ended (stops.ts), on real files in a temp dir: a stop said once at
 * the next start, a run that vanished found by its running.json, and the
 * crash loop's rule (two stops the same way within a minute hold the
 * takeover, for a time that doubles).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import os from 'node:os';
import { removeOnExit } from '../../test-support/temp.js';
import { crashLoop, crashLoopWords, describeError, StopLog, type StopRecord } from './stops.js';

const tempDir = (prefix: string): string => removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
const at = (ms: number): string => new Date(ms).toISOString();
const stop = (ms: number, signature = 'TypeError||ask-udp.ts:92'): StopRecord => ({ at: at(ms), how: 'error', reason: 'TypeError: x (at ask-udp.ts:92)', signature });

describe('stops', () => {
  test('an error in words: name, code, message and the first frame of our code; the signature is what makes two stops "the same way"', () => {
    const err = Object.assign(new RangeError('Port should be > 0 and < 65536. Received function .'), { code: 'ERR_SOCKET_BAD_PORT' });
    err.stack = `${err.name}: ${err.message}\n    at Socket.send (node:dgram:642:12)\n    at file:///opt/dotstub/dist/proxy/dotstub.bundle.js:3:4298`;
    expect(describeError(err)).toEqual({
      reason: 'RangeError [ERR_SOCKET_BAD_PORT]: Port should be > 0 and < 65536. Received function . (at dotstub.bundle.js:3)',
      signature: 'RangeError|ERR_SOCKET_BAD_PORT|dotstub.bundle.js:3',
    });
    expect(describeError('a string').reason).toBe('Error: a string');
  });

  test('a crash loop is two stops the same way within the last minute; the hold doubles with each more, up to 15 minutes', () => {
    const now = 1_000_000_000_000;
    expect(crashLoop([], now)).toBeNull();
    expect(crashLoop([stop(now - 5000)], now)).toBeNull();
    expect(crashLoop([stop(now - 5000, 'other'), stop(now - 2000)], now)).toBeNull();
    expect(crashLoop([stop(now - 70_000), stop(now - 2000)], now)).toBeNull();
    expect(crashLoop([stop(now - 30_000), stop(now - 61_000 + 60_000)], now + 61_000)).toBeNull();
    expect(crashLoop([stop(now - 9000), stop(now - 2000)], now)).toEqual({ count: 2, reason: 'TypeError: x (at ask-udp.ts:92)', holdUntil: now + 60_000 });
    expect(crashLoop([stop(now - 9000), stop(now - 5000), stop(now - 2000)], now)?.holdUntil).toBe(now + 120_000);
    expect(crashLoop(Array.from({ length: 10 }, (_, i) => stop(now - 10_000 + i * 1000)), now)?.holdUntil).toBe(now + 15 * 60_000);
    const loop = crashLoop([stop(now - 9000), stop(now - 2000)], now);
    expect(loop && crashLoopWords(loop)).toMatch(/^dotstub stopped 2 times in a minute \(TypeError: x \(at ask-udp\.ts:92\)\); private DNS is off until \d\d:\d\d:\d\d so this machine keeps its usual DNS, then it turns back on by itself$/);
  });

  test('a run that left running.json behind and is gone is recorded as unannounced; each stop is said at one start only; a clean stop leaves nothing', () => {
    const dir = tempDir('dotstub-stops-');
    const gone = new StopLog(dir, { alive: () => false });
    expect(gone.begin()).toEqual({ lastCrash: null, loop: null });
    gone.running();
    expect(fs.existsSync(path.join(dir, 'running.json'))).toBe(true);
    // As if that process (another pid) died by SIGKILL: the next start finds it.
    const file = path.join(dir, 'running.json');
    fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), pid: process.pid + 1 }));
    const next = new StopLog(dir, { alive: () => false });
    const first = next.begin();
    expect(first.lastCrash).toMatchObject({ how: 'unannounced', signature: 'unannounced' });
    expect(first.lastCrash?.reason).toMatch(/^it ended without a word: killed, out of memory, or the power went \(it had run since /);
    expect(fs.existsSync(path.join(dir, 'running.json'))).toBe(false);
    // Said once.
    expect(new StopLog(dir).begin().lastCrash).toBeNull();
    // A clean stop: nothing found.
    next.running();
    next.stoppedCleanly();
    expect(new StopLog(dir, { alive: () => false }).begin()).toEqual({ lastCrash: null, loop: null });
    expect(new StopLog(dir).stops()).toHaveLength(1);
  });

  test('a stops.json that is not ours is an empty record, never a failed start; the record keeps the last 10', () => {
    const dir = tempDir('dotstub-stops-');
    fs.writeFileSync(path.join(dir, 'stops.json'), '{"stops": [1, {"at": 2}], "saidUpTo": 3}');
    const log = new StopLog(dir);
    expect(log.begin()).toEqual({ lastCrash: null, loop: null });
    for (let i = 0; i < 12; i++) log.record({ how: 'error', reason: `r${i}`, signature: 's' });
    expect(log.stops().map((s) => s.reason)).toEqual(['r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10', 'r11']);
  });
});

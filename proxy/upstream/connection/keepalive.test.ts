import { expect, test } from 'vitest';
import { idleWithinKeepalive } from './keepalive.js';

test('a connection closes before the timeout the server announced, never later than our own', () => {
  // unbound's default 120 s: a second before it; BIND's advertised 30 s: likewise.
  expect(idleWithinKeepalive(120_000, 60_000)).toBe(60_000);
  expect(idleWithinKeepalive(120_000, 200_000)).toBe(119_000);
  expect(idleWithinKeepalive(30_000, 60_000)).toBe(29_000);
  // A tenth of it in between, 100 ms (RFC 7828's unit) at least, half of it at most.
  expect(idleWithinKeepalive(5_000, 60_000)).toBe(4_500);
  expect(idleWithinKeepalive(1_000, 60_000)).toBe(900);
  expect(idleWithinKeepalive(300, 60_000)).toBe(200);
  expect(idleWithinKeepalive(100, 60_000)).toBe(50);
});

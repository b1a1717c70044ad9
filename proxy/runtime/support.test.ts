import { expect, test } from 'vitest';
import { supportEnds, unsupportedRuntime } from './support.js';

test("Node's end-of-life dates, computed from the release schedule", () => {
  expect(supportEnds(18)).toBe('2025-04-30');
  expect(supportEnds(20)).toBe('2026-04-30');
  expect(supportEnds(22)).toBe('2027-04-30');
  expect(supportEnds(24)).toBe('2028-04-30');
  expect(supportEnds(21)).toBe('2024-06-01');
  expect(supportEnds(23)).toBe('2025-06-01');
  expect(supportEnds(25)).toBe('2026-06-01');
  expect(supportEnds(16)).toBeNull();
});

test('a runtime past its end of life is said at start, with what to run instead; a supported one says nothing', () => {
  const today = new Date('2026-12-02T12:00:00Z');
  expect(unsupportedRuntime('20.20.2', today)).toBe(
    "Node.js 20.20.2 has had no security fixes since 2026-04-30, and dotstub reads the network's bytes in it: run it on Node.js 22 or later (the dotstub package brings its own Node.js 24)",
  );
  expect(unsupportedRuntime('25.1.0', today)).toMatch(/^Node\.js 25\.1\.0 has had no security fixes since 2026-06-01/);
  expect(unsupportedRuntime('22.12.0', today)).toBeNull();
  expect(unsupportedRuntime('24.22.3', today)).toBeNull();
  // The last day is still supported; the day after is not.
  expect(unsupportedRuntime('20.20.2', new Date('2026-04-30T23:00:00Z'))).toBeNull();
  expect(unsupportedRuntime('20.20.2', new Date('2026-05-01T00:00:00Z'))).toMatch(/since 2026-04-30/);
  // Two years on, the oldest supported line moves.
  expect(unsupportedRuntime('22.1.0', new Date('2027-06-01T00:00:00Z'))).toMatch(/run it on Node\.js 24 or later/);
  expect(unsupportedRuntime('16.20.0', today)).toMatch(/no security fixes for years/);
});

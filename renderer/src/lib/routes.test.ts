import { describe, expect, it } from 'vitest';
import { parseRoute } from './routes.js';

describe('parseRoute', () => {
  it('maps hashes to sections, unknown to the overview', () => {
    expect(parseRoute('')).toBe('overview');
    expect(parseRoute('#/queries')).toBe('queries');
    expect(parseRoute('#settings')).toBe('settings');
    expect(parseRoute('#/nope')).toBe('overview');
  });
});

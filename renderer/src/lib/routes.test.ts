import { describe, expect, it } from 'vitest';
import { parseRoute } from './routes.js';

const ROUTES = ['overview', 'queries', 'settings'] as const;

describe('parseRoute', () => {
  it('maps hashes to sections, unknown to the home section', () => {
    expect(parseRoute('', ROUTES, 'overview')).toBe('overview');
    expect(parseRoute('#/queries', ROUTES, 'overview')).toBe('queries');
    expect(parseRoute('#settings', ROUTES, 'overview')).toBe('settings');
    expect(parseRoute('#/queries?name=x', ROUTES, 'overview')).toBe('queries');
    expect(parseRoute('#/nope', ROUTES, 'overview')).toBe('overview');
  });
});

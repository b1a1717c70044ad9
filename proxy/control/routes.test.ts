import { describe, expect, it } from 'vitest';
import { API, endpointPath, type Endpoint } from './api-client/endpoints.js';
import { matchRoute, routes } from './routes.js';
import type { ControlService } from './service.js';

// The handlers are not called here: only the table they are bound to is looked at.
const table = routes({} as ControlService);
const endpoints = Object.entries(API) as [string, Endpoint][];

describe('routes', () => {
  it('serve every endpoint of the table but the socket-only one, in its order, with its method and body', () => {
    expect(table.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual(endpoints.filter(([, e]) => !e.socketOnly).map(([, e]) => `${e.method} ${e.path} ${e.body}`));
    expect(table.some((r) => r.path === API.dashboardLink.path)).toBe(false);
  });

  it('each endpoint, called as a client calls it, reaches its own route (a literal path wins over a :param one)', () => {
    for (const [name, e] of endpoints) {
      if (e.socketOnly) continue;
      const path = endpointPath(e, { id: 'quad9', key: 'a'.repeat(32) });
      const { route, params } = matchRoute(table, e.method, path);
      expect(`${route.method} ${route.path}`, name).toBe(`${e.method} ${e.path}`);
      if (e.path.includes(':')) expect(Object.values(params), name).toHaveLength(1);
    }
  });

  it('an unknown path is not_found; a known path with another method is method_not_allowed', () => {
    expect(() => matchRoute(table, 'GET', '/api/nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => matchRoute(table, 'PATCH', '/api/status')).toThrow(expect.objectContaining({ code: 'method_not_allowed' }));
  });
});

describe('endpointPath', () => {
  it('fills in :params URL-encoded and adds the query, leaving out what is undefined', () => {
    expect(endpointPath(API.removeResolver, { id: 'my resolver/1' })).toBe('/api/resolvers/my%20resolver%2F1');
    expect(endpointPath(API.queries, {}, { internal: 1, limit: 100, offset: 0, name: undefined })).toBe('/api/queries?internal=1&limit=100&offset=0');
    expect(() => endpointPath(API.forgetNetwork)).toThrow(TypeError);
  });
});

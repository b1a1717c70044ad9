/** The dashboard's sections, addressed by the URL hash (#/queries) so links and reloads land on them. */
export type Route = 'overview' | 'queries' | 'resolvers' | 'connections' | 'network' | 'events' | 'system-dns' | 'settings';

export const ROUTES: readonly { readonly route: Route; readonly label: string }[] = [
  { route: 'overview', label: 'Overview' },
  { route: 'queries', label: 'Queries' },
  { route: 'resolvers', label: 'Resolvers' },
  { route: 'connections', label: 'Connections' },
  { route: 'network', label: 'Network' },
  { route: 'events', label: 'Events' },
  { route: 'system-dns', label: 'System DNS' },
  { route: 'settings', label: 'Settings' },
];

export function parseRoute(hash: string): Route {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return ROUTES.find((r) => r.route === name)?.route ?? 'overview';
}

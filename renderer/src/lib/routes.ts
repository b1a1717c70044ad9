/**
 * The section a URL hash names (#/queries, #settings), or `home` when it
 * names none of `routes` (App.tsx's SECTIONS lists them), so links and
 * reloads land on the section they name.
 */
export function parseRoute<R extends string>(hash: string, routes: readonly R[], home: R): R {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return routes.find((r) => r === name) ?? home;
}

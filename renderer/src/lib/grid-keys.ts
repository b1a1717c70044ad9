/**
 * Keyboard navigation of the query log's grid (WAI-ARIA grid pattern, rows
 * only): arrows move one row, Page keys a screenful, Home to the newest
 * (following live), End to the oldest,
 * Enter/Space open the active row, Escape closes the detail. Pure: the
 * component applies the result.
 */
export type GridAction =
  | { readonly kind: 'move'; readonly index: number }
  /** Home: the newest row, and follow the live log from there (new rows arrive above it, in view). */
  | { readonly kind: 'newest' }
  | { readonly kind: 'open'; readonly index: number }
  | { readonly kind: 'close' };

/**
 * What a key does with `count` rows, `active` the active row and `pageRows`
 * rows on a screen; null for keys the grid doesn't use (let them through).
 * Every index returned is within 0…count-1.
 */
export function gridKey(key: string, active: number, count: number, pageRows: number): GridAction | null {
  if (count <= 0) return key === 'Escape' ? { kind: 'close' } : null;
  const at = Math.min(Math.max(0, active), count - 1);
  const page = Math.max(1, pageRows);
  const move = (i: number): GridAction => ({ kind: 'move', index: Math.min(count - 1, Math.max(0, i)) });
  switch (key) {
    case 'ArrowDown':
      return move(at + 1);
    case 'ArrowUp':
      return move(at - 1);
    case 'PageDown':
      return move(at + page);
    case 'PageUp':
      return move(at - page);
    case 'Home':
      return { kind: 'newest' };
    case 'End':
      return move(count - 1);
    case 'Enter':
    case ' ':
      return { kind: 'open', index: at };
    case 'Escape':
      return { kind: 'close' };
    default:
      return null;
  }
}

/** Rows a Page key moves: a screenful (below the sticky header row) less one, so the last row read stays in view. */
export function rowsPerPage(viewportPx: number, rowPx: number, headerPx = 0): number {
  return Math.max(1, Math.floor((viewportPx - headerPx) / rowPx) - 1);
}

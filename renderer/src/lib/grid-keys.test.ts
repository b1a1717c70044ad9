import { describe, expect, it } from 'vitest';
import { gridKey, rowsPerPage } from './grid-keys.js';

describe('query log keyboard', () => {
  it('arrows, pages and ends move the active row and stay inside the rows', () => {
    expect(gridKey('ArrowDown', 0, 10, 5)).toEqual({ kind: 'move', index: 1 });
    expect(gridKey('ArrowDown', 9, 10, 5)).toEqual({ kind: 'move', index: 9 });
    expect(gridKey('ArrowUp', 0, 10, 5)).toEqual({ kind: 'move', index: 0 });
    expect(gridKey('PageDown', 7, 10, 5)).toEqual({ kind: 'move', index: 9 });
    expect(gridKey('PageUp', 3, 10, 5)).toEqual({ kind: 'move', index: 0 });
    // Home is the newest row, following live (not just index 0 of a list that keeps growing above it).
    expect(gridKey('Home', 5, 10, 5)).toEqual({ kind: 'newest' });
    expect(gridKey('End', 5, 10, 5)).toEqual({ kind: 'move', index: 9 });
    // An active row beyond the end (rows were filtered away) is pulled back in.
    expect(gridKey('ArrowUp', 50, 10, 5)).toEqual({ kind: 'move', index: 8 });
  });

  it('Enter and Space open the active row, Escape closes the detail, other keys pass through', () => {
    expect(gridKey('Enter', 4, 10, 5)).toEqual({ kind: 'open', index: 4 });
    expect(gridKey(' ', 4, 10, 5)).toEqual({ kind: 'open', index: 4 });
    expect(gridKey('Escape', 4, 10, 5)).toEqual({ kind: 'close' });
    expect(gridKey('a', 4, 10, 5)).toBeNull();
    expect(gridKey('Tab', 4, 10, 5)).toBeNull();
  });

  it('with no rows only Escape does anything', () => {
    expect(gridKey('ArrowDown', 0, 0, 5)).toBeNull();
    expect(gridKey('Enter', 0, 0, 5)).toBeNull();
    expect(gridKey('Escape', 0, 0, 5)).toEqual({ kind: 'close' });
  });

  it('a page is a screenful less one row, at least one', () => {
    expect(rowsPerPage(320, 32)).toBe(9);
    expect(rowsPerPage(10, 32)).toBe(1);
    // The sticky header row is not part of the screenful.
    expect(rowsPerPage(352, 32, 32)).toBe(9);
  });
});

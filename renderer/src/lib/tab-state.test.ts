import { describe, expect, it } from 'vitest';
import { PRIVACY_STATES } from './banner.js';
import { tabIcon, tabTitle, type TabState } from './tab-state.js';

const ALL: TabState[] = [...PRIVACY_STATES, 'paused', 'unknown'];

describe('the tab follows the privacy state', () => {
  it('starts the title with the state, so a background tab says it', () => {
    expect(tabTitle('private', 'Overview')).toBe('Private · Overview · dotstub');
    expect(tabTitle('blocked', 'Query log')).toBe('Stopped · Query log · dotstub');
    expect(tabTitle('paused', 'Overview')).toBe('Paused · Overview · dotstub');
    expect(tabTitle('off', 'Overview')).toBe('Off · Overview · dotstub');
    expect(tabTitle('unknown', 'Overview')).toBe('Status unknown · Overview · dotstub');
  });

  it('has its own favicon for every state, and only Private is green', () => {
    const icons = ALL.map(tabIcon);
    expect(new Set(icons).size).toBe(ALL.length);
    for (const [i, state] of ALL.entries()) {
      expect(icons[i]).toMatch(/^data:image\/svg\+xml,/);
      expect(decodeURIComponent(icons[i]!).includes('#1f883d')).toBe(state === 'private');
    }
  });
});

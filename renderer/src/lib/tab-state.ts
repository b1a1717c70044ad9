/**
 * The browser tab follows the privacy state (issue 24, item 6): its title
 * starts with the state's word and its favicon is the state's symbol (the
 * tray's shapes), so a background tab never looks protected when it isn't.
 * The brand mark in the page stays neutral. Pure: App sets what this returns.
 */
import type { BannerState } from './banner.js';
import { stateText } from './banner.js';

/** The tab's state: a banner state, or unknown (not connected, not signed in, not yet known). */
export type TabState = BannerState | 'unknown';

const svg = (body: string): string =>
  `data:image/svg+xml,${encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="16" height="16">${body}</svg>`)}`;

const SHACKLE = (colour: string): string => `<path d="M5 7.2V5a3 3 0 0 1 6 0v2.2" fill="none" stroke="${colour}" stroke-width="1.8"/>`;

/** The tray's symbols (assets/src/tray-*.svg), one per state; never colour alone. */
const ICONS: Readonly<Record<TabState, string>> = {
  private: svg(
    `<defs><mask id="k"><rect width="16" height="16" fill="#fff"/><circle cx="8" cy="10.5" r="1.35" fill="#000"/><rect x="7.35" y="10.8" width="1.3" height="2.6" rx="0.6" fill="#000"/></mask></defs>${SHACKLE('#1f883d')}<rect x="2.5" y="7" width="11" height="8.2" rx="1.6" fill="#1f883d" mask="url(#k)"/>`,
  ),
  'private-unverified': svg(
    `<defs><mask id="q"><rect width="16" height="16" fill="#fff"/><path d="M6.4 10a1.6 1.6 0 1 1 2.3 1.45c-.45.25-.7.6-.7 1.05v.2" fill="none" stroke="#000" stroke-width="1.35" stroke-linecap="round"/><circle cx="8" cy="14" r="0.8" fill="#000"/></mask></defs>${SHACKLE('#9a6700')}<rect x="2.5" y="7" width="11" height="8.2" rx="1.6" fill="#9a6700" mask="url(#q)"/>`,
  ),
  captive: svg(
    '<path d="M1.6 6.4a9 9 0 0 1 12.8 0" fill="none" stroke="#0969da" stroke-width="1.8" stroke-linecap="round"/><path d="M4.3 9.2a5.2 5.2 0 0 1 7.4 0" fill="none" stroke="#0969da" stroke-width="1.8" stroke-linecap="round"/><circle cx="8" cy="12.8" r="1.9" fill="#0969da"/>',
  ),
  degraded: svg(
    '<defs><mask id="b"><rect width="16" height="16" fill="#fff"/><rect x="7.2" y="5.5" width="1.6" height="5" rx="0.8" fill="#000"/><circle cx="8" cy="12.4" r="0.95" fill="#000"/></mask></defs><path d="M8 1.6 15 14.4H1Z" fill="#bc4c00" stroke="#bc4c00" stroke-width="1.2" stroke-linejoin="round" mask="url(#b)"/>',
  ),
  blocked: svg('<circle cx="8" cy="8" r="6.2" fill="none" stroke="#cf222e" stroke-width="2.2"/><path d="M3.7 3.7 12.3 12.3" stroke="#cf222e" stroke-width="2.2"/>'),
  off: svg(`<path d="M5 7.2V5a3 3 0 0 1 6 0v2.2" fill="none" stroke="#6e7781" stroke-width="1.6"/><rect x="3.1" y="7.6" width="9.8" height="7" rx="1.4" fill="none" stroke="#6e7781" stroke-width="1.6"/>`),
  paused: svg('<rect x="3.5" y="2.5" width="3.2" height="11" rx="1" fill="#9a6700"/><rect x="9.3" y="2.5" width="3.2" height="11" rx="1" fill="#9a6700"/>'),
  unknown: svg('<circle cx="8" cy="8" r="6.2" fill="none" stroke="#6e7781" stroke-width="1.6" stroke-dasharray="2.4 1.8"/><path d="M6.3 6.4a1.8 1.8 0 1 1 2.5 1.6c-.5.25-.8.6-.8 1.1v.4" fill="none" stroke="#6e7781" stroke-width="1.5" stroke-linecap="round"/><circle cx="8" cy="11.6" r="0.9" fill="#6e7781"/>'),
};

function word(state: TabState): string {
  if (state === 'unknown') return 'Status unknown';
  if (state === 'paused') return 'Paused';
  return stateText(state).label;
}

/** "Private · Overview · dotstub"; "Stopped · Query log · dotstub". */
export function tabTitle(state: TabState, section: string): string {
  return `${word(state)} · ${section} · dotstub`;
}

export function tabIcon(state: TabState): string {
  return ICONS[state];
}

/**
 * State → plain words, shared by the menu's status line and the tooltip so
 * both say the same thing.
 */
import { trayStatusLine } from '../../proxy/privacy/privacy-words.js';
import type { TrayState } from './types.js';

export function activeResolverLabel(state: TrayState): string | null {
  if (state.activeResolverId === null) return null;
  return state.resolvers.find((r) => r.id === state.activeResolverId)?.label ?? state.activeResolverId;
}

export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms)} ms`;
}

/** Shortens to `max` characters with an ellipsis (tray menus don't wrap). */
export function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
}

/**
 * One line: "Private DNS: on — Quad9, verified". Says what protects the
 * user's DNS right now, not how the proxy works.
 */
export function statusLine(state: TrayState): string {
  const resolver = activeResolverLabel(state);
  if (state.service?.state === 'denied') return 'Private DNS: unknown — not allowed to ask the service';
  if (state.service?.state === 'off') return 'Private DNS: off — the dotstub service is not running';
  if (!state.proxyRunning) return 'Private DNS: off — dotstub is not running';
  return trayStatusLine(state.privacy, resolver);
}

/** State → tray tooltip text (hover text; Windows cuts tooltips at 127 characters). */
import type { TrayState } from './types.js';
import { clip, formatMs, statusLine } from './words.js';

export const MAX_TOOLTIP = 127;

export function tooltipFor(state: TrayState): string {
  const parts = [`dotstub — ${statusLine(state)}`];
  if (state.proxyRunning && state.p50Ms !== null) parts.push(`median lookup ${formatMs(state.p50Ms)}`);
  if (state.reason !== '' && !(state.proxyRunning && state.privacy === 'private')) parts.push(state.reason);
  return clip(parts.join(' · '), MAX_TOOLTIP);
}

/**
 * State → tray icon file. Each state has its own shape, not only its own
 * colour (assets/src/*.svg): closed lock, lock with a question mark, hotspot
 * waves, warning triangle, no-entry circle, hollow lock.
 *
 * Files: assets/tray-<state>.png (16×16) with tray-<state>@2x.png (32×32)
 * beside it; Electron's nativeImage picks the @2x file on high-DPI screens.
 */
import type { PrivacyState } from './types.js';

export const TRAY_ICON_STATES: readonly PrivacyState[] = ['private', 'private-unverified', 'captive', 'degraded', 'blocked', 'off'];

/** The 1x file name in assets/, e.g. "tray-private.png". */
export function iconForState(state: { readonly privacy: PrivacyState; readonly proxyRunning: boolean }): string {
  return `tray-${state.proxyRunning ? state.privacy : 'off'}.png`;
}

export const APP_ICON = 'icon.png';

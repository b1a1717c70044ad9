/**
 * IPC between the dashboard window (preload) and the main process: channel
 * names as constants, and the bridge's shape. The preload exposes exactly
 * these methods as `window.dotstubDesktop`; main checks every sender.
 */
export const IPC = {
  /** (url: string) → boolean: opens an allow-listed https link in the user's browser. */
  openExternal: 'dotstub:open-external',
  /** () → DesktopInfo */
  getInfo: 'dotstub:get-info',
  /** () → void: hides the dashboard window (the app stays in the tray). */
  hideWindow: 'dotstub:hide-window',
} as const;

export interface DesktopInfo {
  readonly appVersion: string;
  readonly electronVersion: string;
  readonly platform: string;
}

/** What the dashboard sees on `window.dotstubDesktop` inside the app (absent in a plain browser). */
export interface DesktopBridge {
  openExternal(url: string): Promise<boolean>;
  getInfo(): Promise<DesktopInfo>;
  hideWindow(): Promise<void>;
}

/** The global the preload defines. */
export const BRIDGE_NAME = 'dotstubDesktop';

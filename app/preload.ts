/**
 * The dashboard window's preload (sandboxed: only `electron`'s renderer
 * modules are available, so the build bundles ipc.ts into one CommonJS file,
 * dist/app/preload.cjs). Exposes named methods only, never ipcRenderer
 * itself; main checks the sender of each call.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { BRIDGE_NAME, IPC, type DesktopBridge, type DesktopInfo } from './ipc.js';

const api = {
  openExternal: (url: string): Promise<boolean> => ipcRenderer.invoke(IPC.openExternal, String(url)) as Promise<boolean>,
  getInfo: (): Promise<DesktopInfo> => ipcRenderer.invoke(IPC.getInfo) as Promise<DesktopInfo>,
  hideWindow: (): Promise<void> => ipcRenderer.invoke(IPC.hideWindow) as Promise<void>,
} satisfies DesktopBridge;

export type PreloadApi = typeof api;

contextBridge.exposeInMainWorld(BRIDGE_NAME, api);

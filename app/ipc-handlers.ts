/**
 * The main process's side of the bridge (app/ipc.ts): one handler per
 * channel, each refusing a sender that is not a frame showing the dashboard.
 */
import { app, ipcMain, shell, type IpcMainInvokeEvent } from 'electron';
import { IPC, type DesktopInfo } from './ipc.js';
import { isAllowedExternal, isTrustedSender } from './security/urls.js';

export interface IpcOptions {
  /** The running proxy's control origin (the dashboard's), or undefined while none runs. */
  readonly controlOrigin: () => string | undefined;
  readonly hideWindow: () => void;
}

export function handleIpc(options: IpcOptions): void {
  function handle<A extends unknown[], R>(channel: string, fn: (event: IpcMainInvokeEvent, ...args: A) => R): void {
    ipcMain.handle(channel, (event, ...args: unknown[]) => {
      if (!isTrustedSender(event.senderFrame?.url, options.controlOrigin())) throw new Error(`${channel}: refused, the sender is not the dotstub dashboard`);
      return fn(event, ...(args as A));
    });
  }
  handle(IPC.openExternal, async (_event, url: unknown) => {
    if (typeof url !== 'string' || !isAllowedExternal(url)) return false;
    await shell.openExternal(url);
    return true;
  });
  handle(IPC.getInfo, (): DesktopInfo => ({ appVersion: app.getVersion(), electronVersion: process.versions.electron ?? '', platform: process.platform }));
  handle(IPC.hideWindow, () => options.hideWindow());
}

/**
 * The main process's side of the bridge (app/ipc.ts): one handler per
 * channel, each refusing a sender that is not the dashboard window's own
 * page (a web contents the app created for it) showing the control origin:
 * another window that reached the control origin, or a frame of another
 * origin inside the dashboard, gets no answer.
 */
import { app, ipcMain, shell, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { IPC, type DesktopInfo } from './ipc.js';
import { isAllowedExternal, isTrustedSender } from './security/urls.js';

export interface IpcOptions {
  /** The running proxy's control origin (the dashboard's), or undefined while none runs. */
  readonly controlOrigin: () => string | undefined;
  /** Whether `contents` is the dashboard window's page. */
  readonly isDashboard: (contents: WebContents) => boolean;
  readonly hideWindow: () => void;
}

export function handleIpc(options: IpcOptions): void {
  function handle<A extends unknown[], R>(channel: string, fn: (event: IpcMainInvokeEvent, ...args: A) => R): void {
    ipcMain.handle(channel, (event, ...args: unknown[]) => {
      if (!options.isDashboard(event.sender) || !isTrustedSender(event.senderFrame?.url, options.controlOrigin())) throw new Error(`${channel}: refused, the sender is not the dotstub dashboard`);
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

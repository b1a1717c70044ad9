// Loaded into the real Electron's main process before the app, by the
// desktop app's tests (`electron -r test-support/electron-hook.cjs .`,
// test-support/desktop-app.ts): Electron has no list of trays or of the
// notifications shown, so this keeps, on globalThis, each Tray the app
// makes with the last menu it was given, and each notification's body. The
// test reads them with Playwright's electronApp.evaluate. It changes nothing
// the app does.
'use strict';
/* global require */
// A CommonJS file: `-r` loads it, as Playwright loads its own loader into Electron.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tray, Notification } = require('electron');

const seen = { trays: [], menus: new Map(), notifications: [] };
globalThis.__dotstubSeen = seen;

const setContextMenu = Tray.prototype.setContextMenu;
Tray.prototype.setContextMenu = function (menu) {
  if (!seen.trays.includes(this)) seen.trays.push(this);
  seen.menus.set(this, menu);
  return setContextMenu.call(this, menu);
};

const show = Notification.prototype.show;
Notification.prototype.show = function () {
  seen.notifications.push(this.body);
  return show.call(this);
};

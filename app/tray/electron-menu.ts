/**
 * The thin adapter from MenuItemSpec (plain data) to Electron's menu
 * options. The only logic: each click dispatches the item's action.
 * Typechecked here; runs only where the Electron binary exists.
 */
import type { MenuItemConstructorOptions } from 'electron';
import type { MenuItemSpec, TrayAction } from './types.js';

export function toElectronMenu(items: readonly MenuItemSpec[], dispatch: (action: TrayAction) => void): MenuItemConstructorOptions[] {
  return items.map((item): MenuItemConstructorOptions => {
    switch (item.type) {
      case 'separator':
        return { type: 'separator' };
      case 'label':
        return { id: item.id, type: 'normal', label: item.label, enabled: false };
      case 'normal':
        return { id: item.id, type: 'normal', label: item.label, enabled: item.enabled, click: () => dispatch(item.action) };
      case 'checkbox':
        return { id: item.id, type: 'checkbox', label: item.label, enabled: item.enabled, checked: item.checked, click: () => dispatch(item.action) };
      case 'radio':
        return { id: item.id, type: 'radio', label: item.label, enabled: item.enabled, checked: item.checked, click: () => dispatch(item.action) };
      case 'submenu':
        return { id: item.id, type: 'submenu', label: item.label, enabled: item.enabled, submenu: toElectronMenu(item.submenu, dispatch) };
    }
  });
}

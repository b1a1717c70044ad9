import { describe, expect, it } from 'vitest';
import { toElectronMenu } from './electron-menu.js';
import { createTemplate } from './template.js';
import type { TrayAction } from './types.js';

describe('toElectronMenu', () => {
  it('maps every spec to Electron options and clicks dispatch the item’s action', () => {
    const state = {
      privacy: 'private' as const,
      reason: '',
      resolvers: [{ id: 'quad9', label: 'Quad9', medianLatencyMs: null }],
      activeResolverId: 'quad9',
      proxyRunning: true,
      p50Ms: null,
      captive: null,
      systemDns: { enabled: false, inForce: false, reason: 'private DNS is not enabled for this machine', blocked: null },
    };
    const dispatched: TrayAction[] = [];
    const menu = toElectronMenu(createTemplate(state), (a) => dispatched.push(a));
    expect(menu.map((m) => [m.type, m.label, m.enabled])).toEqual([
      ['checkbox', 'Enable private DNS', true],
      ['normal', 'Off — private DNS is not enabled for this machine', false],
      ['separator', undefined, undefined],
      ['normal', 'Private DNS: on — Quad9, verified', false],
      ['separator', undefined, undefined],
      ['submenu', 'Resolver: Quad9', true],
      ['normal', 'Open dashboard', true],
      ['separator', undefined, undefined],
      ['normal', 'Pause private DNS', true],
      ['normal', 'Quit dotstub', true],
    ]);
    expect(menu[0]?.checked).toBe(false);
    expect(menu[1]?.click).toBeUndefined(); // status lines do nothing
    expect(menu[3]?.click).toBeUndefined();
    const sub = menu[5]?.submenu;
    if (!Array.isArray(sub)) throw new Error('expected a submenu array');
    expect(sub[0]).toMatchObject({ type: 'radio', checked: true, label: 'Quad9' });
    const click = (i: { click?: unknown }): void => (i.click as () => void)();
    click(menu[0] as { click?: unknown });
    click(sub[0] as { click?: unknown });
    click(menu[6] as { click?: unknown });
    click(menu[8] as { click?: unknown });
    click(menu[9] as { click?: unknown });
    expect(dispatched).toEqual([
      { type: 'set-system-dns', enabled: true },
      { type: 'switch-resolver', id: 'quad9' },
      { type: 'open-dashboard' },
      { type: 'pause' },
      { type: 'quit' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { createTemplate, MAX_LINE } from './template.js';
import { iconForState, TRAY_ICON_STATES } from './icon-for-state.js';
import { MAX_TOOLTIP, tooltipFor } from './tooltip.js';
import { INITIAL_TRAY_STATE, type MenuItemSpec, type TrayState } from './types.js';

const resolvers = [
  { id: 'quad9', label: 'Quad9', medianLatencyMs: 12.4 },
  { id: 'cloudflare', label: 'Cloudflare', medianLatencyMs: null },
];

const privateState: TrayState = {
  privacy: 'private',
  reason: 'authenticated TLS to dns.quad9.net',
  resolvers,
  activeResolverId: 'quad9',
  proxyRunning: true,
  p50Ms: 8.25,
  captive: null,
};

function find(items: readonly MenuItemSpec[], id: string): MenuItemSpec | undefined {
  for (const item of items) {
    if ('id' in item && item.id === id) return item;
    if (item.type === 'submenu') {
      const inner = find(item.submenu, id);
      if (inner) return inner;
    }
  }
  return undefined;
}

describe('createTemplate: the machine-wide toggle comes first', () => {
  const sys = (over: Partial<NonNullable<TrayState['systemDns']>>): TrayState => ({
    ...privateState,
    systemDns: { enabled: false, inForce: false, reason: 'private DNS is not enabled for this machine', blocked: null, ...over },
  });
  it('off: unchecked, clicking enables, the reason beside it', () => {
    const [toggle, reason] = createTemplate(sys({}));
    expect(toggle).toEqual({ type: 'checkbox', id: 'system-dns', label: 'Enable private DNS', checked: false, enabled: true, action: { type: 'set-system-dns', enabled: true } });
    expect(reason).toEqual({ type: 'label', id: 'system-dns-reason', label: 'Off — private DNS is not enabled for this machine' });
  });
  it('on: checked, clicking disables', () => {
    const [toggle, reason] = createTemplate(sys({ enabled: true, inForce: true, reason: "this machine's DNS goes to dotstub" }));
    expect(toggle).toMatchObject({ checked: true, enabled: true, action: { type: 'set-system-dns', enabled: false } });
    expect(reason).toMatchObject({ label: "On — this machine's DNS goes to dotstub" });
  });
  it('enabled but rewritten by another program: still checked (disable is the way out), the problem beside it', () => {
    const [toggle, reason] = createTemplate(sys({ enabled: true, inForce: false, reason: 'another program keeps changing DNS: "dhclient"' }));
    expect(toggle).toMatchObject({ checked: true, action: { type: 'set-system-dns', enabled: false } });
    expect(reason).toMatchObject({ label: 'Off — another program keeps changing DNS: "dhclient"' });
  });
  it('unprivileged: says what to do, and the click explains (a notification)', () => {
    const [toggle, reason] = createTemplate(sys({ blocked: 'needs root: run with sudo, or install the service' }));
    expect(toggle).toMatchObject({ enabled: true, checked: false });
    expect(reason).toMatchObject({ label: 'Off — needs root: run with sudo, or install the service' });
  });
  it('proxy not running: the toggle is there, disabled, and says why', () => {
    const [toggle, reason] = createTemplate({ ...sys({ enabled: true, inForce: true }), proxyRunning: false });
    expect(toggle).toMatchObject({ enabled: false, checked: false });
    expect(reason).toMatchObject({ label: 'Off — dotstub is not running' });
  });
});

describe('createTemplate', () => {
  it('builds the whole menu as data when private', () => {
    expect(createTemplate(privateState)).toEqual([
      { type: 'checkbox', id: 'system-dns', label: 'Enable private DNS', checked: false, enabled: false, action: { type: 'set-system-dns', enabled: true } },
      { type: 'label', id: 'system-dns-reason', label: "Off — this dotstub doesn't manage system DNS" },
      { type: 'separator' },
      { type: 'label', id: 'status', label: 'Private DNS: on — Quad9, verified' },
      { type: 'label', id: 'latency', label: 'Median lookup: 8.3 ms' },
      { type: 'separator' },
      {
        type: 'submenu',
        id: 'resolvers',
        label: 'Resolver: Quad9',
        enabled: true,
        submenu: [
          { type: 'radio', id: 'resolver:quad9', label: 'Quad9 — 12 ms', checked: true, enabled: true, action: { type: 'switch-resolver', id: 'quad9' } },
          { type: 'radio', id: 'resolver:cloudflare', label: 'Cloudflare', checked: false, enabled: true, action: { type: 'switch-resolver', id: 'cloudflare' } },
        ],
      },
      { type: 'normal', id: 'open-dashboard', label: 'Open dashboard', enabled: true, action: { type: 'open-dashboard' } },
      { type: 'separator' },
      { type: 'normal', id: 'pause', label: 'Pause private DNS', enabled: true, action: { type: 'pause' } },
      { type: 'normal', id: 'quit', label: 'Quit dotstub', enabled: true, action: { type: 'quit' } },
    ]);
  });

  it('says each state in plain words and shows the reason when not private', () => {
    const line = (privacy: TrayState['privacy']): string => {
      const items = createTemplate({ ...privateState, privacy, reason: 'port 853 timed out from this network' });
      return (find(items, 'status') as { label: string }).label;
    };
    expect(line('private-unverified')).toBe('Private DNS: on — Quad9, not verified');
    expect(line('captive')).toBe('Private DNS: waiting for a Wi-Fi sign-in');
    expect(line('degraded')).toBe('Private DNS: off — TLS blocked, using plain DNS');
    expect(line('blocked')).toBe('Private DNS: stopped — failing safe until encrypted DNS works');
    expect(line('off')).toBe('Private DNS: off');
    const blocked = createTemplate({ ...privateState, privacy: 'blocked', reason: 'port 853 timed out from this network' });
    expect(find(blocked, 'reason')).toEqual({ type: 'label', id: 'reason', label: 'port 853 timed out from this network' });
  });

  it('offers Resume and disables resolver choices while the proxy is not running', () => {
    const items = createTemplate({ ...privateState, privacy: 'off', proxyRunning: false, reason: 'paused' });
    expect(find(items, 'status')).toEqual({ type: 'label', id: 'status', label: 'Private DNS: off — dotstub is not running' });
    expect(find(items, 'reason')).toEqual({ type: 'label', id: 'reason', label: 'paused' });
    expect(find(items, 'pause')).toBeUndefined();
    expect(find(items, 'resume')).toEqual({ type: 'normal', id: 'resume', label: 'Resume private DNS', enabled: true, action: { type: 'resume' } });
    expect(find(items, 'latency')).toBeUndefined();
    expect(find(items, 'resolvers')).toMatchObject({ enabled: false });
    expect(find(items, 'resolver:quad9')).toMatchObject({ enabled: false, checked: true });
    expect(find(items, 'open-dashboard')).toMatchObject({ enabled: false });
    expect(find(items, 'quit')).toMatchObject({ enabled: true });
  });

  it('has no resolver menu before the API has answered', () => {
    const items = createTemplate(INITIAL_TRAY_STATE);
    expect(find(items, 'resolvers')).toBeUndefined();
    expect(items.map((i) => ('id' in i ? i.id : '-'))).toEqual(['system-dns', 'system-dns-reason', '-', 'status', 'reason', '-', 'open-dashboard', '-', 'resume', 'quit']);
  });

  it('clips long reasons and labels so the menu stays narrow', () => {
    const long = 'certificate for dns.example.net was issued by an unknown CA: TLS interception? '.repeat(3);
    const items = createTemplate({ ...privateState, privacy: 'blocked', reason: long, resolvers: [{ id: 'x', label: 'y'.repeat(200), medianLatencyMs: 1 }], activeResolverId: 'x' });
    const reason = find(items, 'reason') as { label: string };
    expect(reason.label.length).toBe(MAX_LINE);
    expect(reason.label.endsWith('…')).toBe(true);
    expect((find(items, 'resolver:x') as { label: string }).label.length).toBeLessThanOrEqual(MAX_LINE);
  });

  it('falls back to the id when the active resolver is not in the list', () => {
    const items = createTemplate({ ...privateState, activeResolverId: 'custom:10.0.0.1:853' });
    expect(find(items, 'status')).toMatchObject({ label: 'Private DNS: on — custom:10.0.0.1:853, verified' });
    expect(items.filter((i) => i.type === 'radio')).toEqual([]);
  });
});

describe('tooltipFor', () => {
  it('says the status and the median lookup time', () => {
    expect(tooltipFor(privateState)).toBe('dotstub — Private DNS: on — Quad9, verified · median lookup 8.3 ms');
  });
  it('includes the reason when not private and stays within the Windows limit', () => {
    const t = tooltipFor({ ...privateState, privacy: 'degraded', reason: 'TLS and DoH both blocked; '.repeat(20) });
    expect(t.startsWith('dotstub — Private DNS: off — TLS blocked, using plain DNS')).toBe(true);
    expect(t.length).toBeLessThanOrEqual(MAX_TOOLTIP);
  });
  it('says when dotstub is not running', () => {
    expect(tooltipFor({ ...INITIAL_TRAY_STATE, reason: 'paused' })).toBe('dotstub — Private DNS: off — dotstub is not running · paused');
  });
});

describe('iconForState', () => {
  it('has one icon per privacy state, and the hollow one while the proxy is down', () => {
    expect(TRAY_ICON_STATES.map((privacy) => iconForState({ privacy, proxyRunning: true }))).toEqual([
      'tray-private.png',
      'tray-private-unverified.png',
      'tray-captive.png',
      'tray-degraded.png',
      'tray-blocked.png',
      'tray-off.png',
    ]);
    expect(iconForState({ privacy: 'private', proxyRunning: false })).toBe('tray-off.png');
  });
});

describe('a Wi-Fi that wants a sign-in', () => {
  const captive = (exception: NonNullable<TrayState['captive']>['exception']): TrayState => ({
    ...privateState,
    privacy: 'captive',
    reason: 'This Wi-Fi wants you to sign in at wifi.example.net.',
    captive: { portalHost: 'wifi.example.net', exception },
  });

  it('strict mode: one click allows (remembered), or "Not now"', () => {
    const items = createTemplate(captive('asking'));
    expect(find(items, 'captive-allow')).toMatchObject({ label: 'Allow sign-in to wifi.example.net', action: { type: 'captive', action: 'allow' } });
    expect(find(items, 'captive-decline')).toMatchObject({ action: { type: 'captive', action: 'decline' } });
    expect(find(items, 'sign-in')).toBeUndefined();
  });

  it('while allowed: "Sign in to network" opens the sign-in window; nothing to answer', () => {
    const items = createTemplate(captive('active'));
    expect(find(items, 'sign-in')).toMatchObject({ label: 'Sign in to network (wifi.example.net)…', action: { type: 'sign-in' } });
    expect(find(items, 'captive-allow')).toBeUndefined();
    expect(find(items, 'status')).toMatchObject({ label: 'Private DNS: waiting for a Wi-Fi sign-in' });
  });

  it('expired or declined: allow again', () => {
    expect(find(createTemplate(captive('expired')), 'captive-allow')).toBeDefined();
    expect(find(createTemplate(captive('declined')), 'captive-decline')).toBeUndefined();
    expect(find(createTemplate(privateState), 'sign-in')).toBeUndefined();
  });
});

describe('createTemplate with the installed service (one proxy per machine)', () => {
  const service = (over: Partial<TrayState>): TrayState => ({
    ...privateState,
    service: { state: 'on', reason: '', hint: '' },
    systemDns: { enabled: true, inForce: true, reason: "this machine's DNS goes to dotstub", blocked: null },
    ...over,
  });
  it('on: the toggle first; pause gives the old DNS back for 5 minutes; quit leaves private DNS as it is', () => {
    const items = createTemplate(service({}));
    expect(items[0]).toMatchObject({ id: 'system-dns', checked: true, enabled: true });
    expect(find(items, 'pause')).toEqual({ type: 'normal', id: 'pause', label: 'Pause private DNS for 5 minutes', enabled: true, action: { type: 'pause' } });
    expect(find(items, 'resume')).toBeUndefined();
    expect(find(items, 'quit')).toMatchObject({ label: 'Quit (private DNS stays as it is)', action: { type: 'quit' } });
    expect(find(items, 'own-proxy')).toBeUndefined();
  });
  it('paused: resume instead of pause', () => {
    const items = createTemplate(service({ systemDns: { enabled: false, inForce: false, reason: 'paused until 10:05', blocked: null, paused: true } }));
    expect(find(items, 'resume')).toMatchObject({ label: 'Resume private DNS', action: { type: 'resume' } });
    expect(find(items, 'pause')).toBeUndefined();
  });
  it('installed but off: "Turn on private DNS…" first (the one step that needs an administrator); no pause, no resume', () => {
    const items = createTemplate(service({ proxyRunning: false, privacy: 'off', service: { state: 'off', reason: 'the dotstub service is not running', hint: 'sudo systemctl enable --now dotstub' } }));
    expect(items.slice(0, 2)).toEqual([
      { type: 'normal', id: 'turn-on-service', label: 'Turn on private DNS…', enabled: true, action: { type: 'turn-on-service' } },
      { type: 'label', id: 'system-dns-reason', label: 'Off — the dotstub service is not running' },
    ]);
    expect(find(items, 'pause')).toBeUndefined();
    expect(find(items, 'resume')).toBeUndefined();
    expect(find(items, 'status')).toMatchObject({ label: 'Private DNS: off — the dotstub service is not running' });
    expect(find(items, 'reason')).toBeUndefined();
  });
  it('not allowed: the toggle disabled, why, and what to ask an administrator for', () => {
    const items = createTemplate(service({ proxyRunning: false, service: { state: 'denied', reason: 'you are not in the dotstub group', hint: 'sudo adduser alice dotstub, then log in again' } }));
    expect(items.slice(0, 3)).toEqual([
      { type: 'checkbox', id: 'system-dns', label: 'Enable private DNS', checked: false, enabled: false, action: { type: 'set-system-dns', enabled: true } },
      { type: 'label', id: 'system-dns-reason', label: 'Not allowed — you are not in the dotstub group' },
      { type: 'label', id: 'service-hint', label: 'sudo adduser alice dotstub, then log in again' },
    ]);
    expect(find(items, 'status')).toMatchObject({ label: 'Private DNS: unknown — not allowed to ask the service' });
  });
  it('no service, own unprivileged proxy: says what it cannot do', () => {
    const items = createTemplate({ ...privateState, systemDns: { enabled: false, inForce: false, reason: 'not enabled', blocked: 'needs root: run with sudo, or install the service' } });
    expect(find(items, 'own-proxy')).toEqual({ type: 'label', id: 'own-proxy', label: 'No dotstub service: install it to turn this on' });
    expect(find(items, 'pause')).toMatchObject({ label: 'Pause private DNS' });
    expect(find(items, 'quit')).toMatchObject({ label: 'Quit dotstub' });
  });
});

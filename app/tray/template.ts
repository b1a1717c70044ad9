/**
 * The tray menu as plain data: createTemplate(state) is pure, so tests
 * compare arrays and the Electron adapter (electron-menu.ts) stays thin.
 * Pattern from mattermost/desktop's tray (createTemplate).
 */
import type { MenuItemSpec, TrayState } from './types.js';
import { activeResolverLabel, clip, formatMs, statusLine } from './words.js';

/** Longest text line in the menu: menus don't wrap, and long reasons push the menu off screen. */
export const MAX_LINE = 60;

function resolverItemLabel(label: string, medianLatencyMs: number | null): string {
  return medianLatencyMs === null ? label : `${label} — ${formatMs(medianLatencyMs)}`;
}

/**
 * The first items: the machine-wide toggle and, beside it, whether it is in
 * force and why (or why it can't be used).
 */
function systemDnsItems(state: TrayState): MenuItemSpec[] {
  const s = state.systemDns;
  const toggle = (checked: boolean, enabled: boolean): MenuItemSpec => ({
    type: 'checkbox',
    id: 'system-dns',
    label: 'Enable private DNS',
    checked,
    enabled,
    action: { type: 'set-system-dns', enabled: !checked },
  });
  const svc = state.service;
  // The installed service is off: turning it on is the one step that needs an administrator (polkit asks once).
  if (svc?.state === 'off') {
    return [
      { type: 'normal', id: 'turn-on-service', label: 'Turn on private DNS…', enabled: true, action: { type: 'turn-on-service' } },
      { type: 'label', id: 'system-dns-reason', label: clip(`Off — ${svc.reason}`, MAX_LINE) },
    ];
  }
  if (svc?.state === 'denied') {
    return [
      toggle(false, false),
      { type: 'label', id: 'system-dns-reason', label: clip(`Not allowed — ${svc.reason}`, MAX_LINE) },
      ...(svc.hint !== '' ? [{ type: 'label' as const, id: 'service-hint', label: clip(svc.hint, MAX_LINE) }] : []),
    ];
  }
  if (!state.proxyRunning) return [toggle(false, false), { type: 'label', id: 'system-dns-reason', label: 'Off — dotstub is not running' }];
  if (!s) return [toggle(false, false), { type: 'label', id: 'system-dns-reason', label: "Off — this dotstub doesn't manage system DNS" }];
  const words = s.blocked !== null && !s.enabled ? s.blocked : s.reason;
  return [
    // Unprivileged, the toggle stays clickable: the click says what to do (needs root), as a notification.
    toggle(s.enabled, true),
    { type: 'label', id: 'system-dns-reason', label: clip(`${s.inForce ? 'On' : 'Off'} — ${words}`, MAX_LINE) },
    // No service: say what this app's own proxy can't do.
    ...(!svc && s.blocked !== null ? [{ type: 'label' as const, id: 'own-proxy', label: 'No dotstub service: install it to turn this on' }] : []),
  ];
}

/** Pause/resume: the app's own proxy stops and starts; the service gives the old DNS back for 5 minutes. */
function pauseItem(state: TrayState): MenuItemSpec[] {
  const svc = state.service;
  if (!svc) {
    return [
      state.proxyRunning
        ? { type: 'normal', id: 'pause', label: 'Pause private DNS', enabled: true, action: { type: 'pause' } }
        : { type: 'normal', id: 'resume', label: 'Resume private DNS', enabled: true, action: { type: 'resume' } },
    ];
  }
  const s = state.systemDns;
  if (svc.state !== 'on' || !s) return [];
  if (s.paused) return [{ type: 'normal', id: 'resume', label: 'Resume private DNS', enabled: true, action: { type: 'resume' } }];
  return [{ type: 'normal', id: 'pause', label: 'Pause private DNS for 5 minutes', enabled: s.enabled, action: { type: 'pause' } }];
}

export function createTemplate(state: TrayState): MenuItemSpec[] {
  const items: MenuItemSpec[] = [...systemDnsItems(state), { type: 'separator' }, { type: 'label', id: 'status', label: statusLine(state) }];
  // The reason says why ("port 853 timed out from this network"); not needed when all is well.
  // (With the service off or not allowed, the first lines already say why.)
  const serviceSaid = state.service !== undefined && state.service.state !== 'on';
  if (state.reason !== '' && !serviceSaid && !(state.proxyRunning && state.privacy === 'private')) {
    items.push({ type: 'label', id: 'reason', label: clip(state.reason, MAX_LINE) });
  }
  if (state.proxyRunning && state.p50Ms !== null) {
    items.push({ type: 'label', id: 'latency', label: `Median lookup: ${formatMs(state.p50Ms)}` });
  }
  items.push({ type: 'separator' });

  // A Wi-Fi that wants a sign-in: the way to it first, and strict mode's one-click answer.
  if (state.proxyRunning && state.captive) {
    const c = state.captive;
    if (c.exception === 'asking' || c.exception === 'declined' || c.exception === 'expired') {
      items.push({ type: 'normal', id: 'captive-allow', label: clip(`Allow sign-in to ${c.portalHost}`, MAX_LINE), enabled: true, action: { type: 'captive', action: 'allow' } });
    }
    if (c.exception === 'asking') items.push({ type: 'normal', id: 'captive-decline', label: 'Not now', enabled: true, action: { type: 'captive', action: 'decline' } });
    if (c.exception === 'active') items.push({ type: 'normal', id: 'sign-in', label: clip(`Sign in to network (${c.portalHost})…`, MAX_LINE), enabled: true, action: { type: 'sign-in' } });
    items.push({ type: 'separator' });
  }

  // This network's own names, refused in strict mode until the user chooses for this network.
  if (state.proxyRunning && state.localNames) {
    items.push(
      { type: 'label', id: 'local-names', label: clip(`This network has its own names (${state.localNames.name})`, MAX_LINE) },
      { type: 'label', id: 'local-names-question', label: 'Send them to its resolver, unencrypted?' },
      { type: 'normal', id: 'local-names-allow', label: 'Allow on this network', enabled: true, action: { type: 'local-names', allow: true } },
      { type: 'normal', id: 'local-names-keep', label: 'Keep private', enabled: true, action: { type: 'local-names', allow: false } },
      { type: 'separator' },
    );
  }

  // This network's own encrypted resolver, verified: offered, never taken without the user's click.
  const own = state.ownResolver;
  if (state.proxyRunning && own) {
    items.push(
      { type: 'label', id: 'own-resolver', label: clip(own.inUse ? `Using this network's encrypted DNS: ${own.name}` : `This network offers encrypted DNS: ${own.name}`, MAX_LINE) },
      { type: 'label', id: 'own-resolver-verified', label: clip(`DNS-over-TLS, verified for ${own.verifiedFor}`, MAX_LINE) },
      own.inUse
        ? { type: 'normal', id: 'own-resolver-stop', label: 'Stop using it here', enabled: true, action: { type: 'own-resolver', key: own.key, use: false } }
        : { type: 'normal', id: 'own-resolver-use', label: 'Use it on this network', enabled: true, action: { type: 'own-resolver', key: own.key, use: true } },
      { type: 'separator' },
    );
  }

  if (state.resolvers.length > 0) {
    const active = activeResolverLabel(state);
    items.push({
      type: 'submenu',
      id: 'resolvers',
      label: active === null ? 'Resolver' : `Resolver: ${clip(active, 40)}`,
      enabled: state.proxyRunning,
      submenu: state.resolvers.map((r) => ({
        type: 'radio',
        id: `resolver:${r.id}`,
        label: clip(resolverItemLabel(r.label, r.medianLatencyMs), MAX_LINE),
        checked: r.id === state.activeResolverId,
        enabled: state.proxyRunning,
        action: { type: 'switch-resolver', id: r.id },
      })),
    });
  }
  items.push({ type: 'normal', id: 'open-dashboard', label: 'Open dashboard', enabled: state.proxyRunning, action: { type: 'open-dashboard' } });
  items.push({ type: 'separator' });
  items.push(...pauseItem(state));
  // With the service, quitting the app leaves private DNS as it is.
  items.push({ type: 'normal', id: 'quit', label: state.service ? 'Quit (private DNS stays as it is)' : 'Quit dotstub', enabled: true, action: { type: 'quit' } });
  return items;
}

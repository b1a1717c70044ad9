/**
 * The tray's data: what it shows (TrayState) and the menu as plain data
 * (MenuItemSpec). No Electron here; electron-menu.ts turns specs into a Menu.
 */
import type { CaptiveView, PrivacyState } from '../../proxy/control/api-types.js';

export type { PrivacyState };

export interface TrayResolver {
  readonly id: string;
  readonly label: string;
  /** Median latency over the last 5 minutes (ResolverView.medianLatencyMs); null if no answers yet. */
  readonly medianLatencyMs: number | null;
}

export interface TrayState {
  /** The proxy's privacy state; 'off' whenever the proxy is not running. */
  readonly privacy: PrivacyState;
  /** Plain words from the proxy (or the supervisor, when the proxy is not running). */
  readonly reason: string;
  readonly resolvers: readonly TrayResolver[];
  /** null until the control API has answered once. */
  readonly activeResolverId: string | null;
  /** The supervised proxy is up and its control API reachable. */
  readonly proxyRunning: boolean;
  /** Median latency of the active resolver over the last minute, ms. */
  readonly p50Ms: number | null;
  /** A Wi-Fi that wants a sign-in (state captive): where, and whether sign-in lookups are allowed; null otherwise. */
  readonly captive: { readonly portalHost: string; readonly exception: CaptiveView['exception'] } | null;
  /**
   * The machine-wide takeover (GET /api/system-dns); absent while unknown
   * (not running, not answered yet, or the proxy doesn't manage it).
   */
  readonly systemDns?: TraySystemDns;
  /**
   * A local name refused in strict mode on a network nobody has chosen for
   * yet (local-names-question.ts): the tray asks; absent otherwise.
   */
  readonly localNames?: TrayLocalNames;
  /**
   * The network we're on offers its own encrypted resolver, verified (RFC
   * 9462, DDR; own-resolver-offer.ts): the tray offers it, and never takes
   * it by itself; absent otherwise.
   */
  readonly ownResolver?: TrayOwnResolver;
  /**
   * The installed dotstub service, when there is one: then it is the proxy
   * and the app only drives it (absent: no service; the app runs its own,
   * unprivileged proxy).
   */
  readonly service?: TrayService;
}

export interface TrayLocalNames {
  /** The first name refused on this network (`printer.lan`). */
  readonly name: string;
  /** When it was refused (a new refusal is a new question). */
  readonly at: number;
}

export interface TrayOwnResolver {
  /** The network's key (what the choice is remembered under). */
  readonly key: string;
  /** Its name, `dns.lab.test`. */
  readonly name: string;
  /** The network resolver's address its certificate was verified for. */
  readonly verifiedFor: string;
  /** The user chose it for this network and it carries the lookups now. */
  readonly inUse: boolean;
}

export interface TrayService {
  /** on: it answers on its socket; off: installed, not running; denied: this user may not use it. */
  readonly state: 'on' | 'off' | 'denied';
  /** Why not, short ("you are not in the dotstub group"); '' when on. */
  readonly reason: string;
  /** What to do ("sudo adduser alice dotstub, then log in again"); '' when nothing. */
  readonly hint: string;
}

export interface TraySystemDns {
  /** dotstub has changed the system's DNS (the toggle is checked). */
  readonly enabled: boolean;
  /** The system's DNS goes to dotstub now. */
  readonly inForce: boolean;
  /** Why (not), in words. */
  readonly reason: string;
  /** Why the toggle can't work here ("needs root: …"), or null. */
  readonly blocked: string | null;
  /** Paused by the user: the old DNS until it comes back by itself. */
  readonly paused?: boolean;
}

/** What a menu item does, as data: tests compare these, the adapter dispatches them. */
export type TrayAction =
  /** Points the machine's DNS at dotstub (true) or gives the old DNS back (false). */
  | { readonly type: 'set-system-dns'; readonly enabled: boolean }
  | { readonly type: 'switch-resolver'; readonly id: string }
  | { readonly type: 'open-dashboard' }
  /** Own proxy: stop it. Service: give the old DNS back for 5 minutes (it comes back by itself). */
  | { readonly type: 'pause' }
  /** The installed service is off: turn it on (pkexec systemctl enable --now dotstub; an administrator's password once). */
  | { readonly type: 'turn-on-service' }
  | { readonly type: 'resume' }
  | { readonly type: 'quit' }
  /** Opens the "Sign in to network" window on the portal's page (its own session, through the sign-in proxy). */
  | { readonly type: 'sign-in' }
  /** Strict mode's answer, remembered for this network. */
  | { readonly type: 'captive'; readonly action: 'allow' | 'decline' }
  /** This network's own names: to its resolver, unencrypted (true), or never (false); remembered for this network. */
  | { readonly type: 'local-names'; readonly allow: boolean }
  /** This network's own encrypted resolver, on this network (true), or the user's own again (false); remembered for network `key`. */
  | { readonly type: 'own-resolver'; readonly key: string; readonly use: boolean };

/** A subset of Electron's MenuItemConstructorOptions, as plain data. */
export type MenuItemSpec =
  | { readonly type: 'separator' }
  /** Text only (status lines): never clickable. */
  | { readonly type: 'label'; readonly id: string; readonly label: string }
  | { readonly type: 'normal'; readonly id: string; readonly label: string; readonly enabled: boolean; readonly action: TrayAction }
  | { readonly type: 'checkbox'; readonly id: string; readonly label: string; readonly checked: boolean; readonly enabled: boolean; readonly action: TrayAction }
  | {
      readonly type: 'radio';
      readonly id: string;
      readonly label: string;
      readonly checked: boolean;
      readonly enabled: boolean;
      readonly action: TrayAction;
    }
  | { readonly type: 'submenu'; readonly id: string; readonly label: string; readonly enabled: boolean; readonly submenu: readonly MenuItemSpec[] };

/** Before the proxy has answered: nothing known yet. */
export const INITIAL_TRAY_STATE: TrayState = {
  privacy: 'off',
  reason: 'starting dotstub',
  resolvers: [],
  activeResolverId: null,
  proxyRunning: false,
  p50Ms: null,
  captive: null,
};

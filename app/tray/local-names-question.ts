/**
 * The tray's question about this network's own names (issue 34), asked as
 * a Wi-Fi sign-in is: in strict mode, names the network owns (`printer.lan`,
 * a VPN's `intranet`) are refused until the user chooses for this network;
 * the first refused one brings a notification and, until answered, the
 * question in the menu. The answer is the per-network choice the dashboard's
 * Network view sets (PUT /api/network/local-names), so it is asked once per
 * network: never in opportunistic mode (its 'ask' sends them, as the OS
 * did), nor for a network already answered, nor for one that can't be told
 * apart (no gateway: nothing could remember the answer). Pure.
 */
import type { LocalNamesView, StatusView } from '../../proxy/control/api-types.js';
import type { Notice } from './captive-notices.js';
import type { TrayLocalNames, TrayState } from './types.js';

export function localNamesQuestion(status: StatusView | undefined, view: LocalNamesView | null | undefined): TrayLocalNames | undefined {
  if (status?.mode !== 'strict' || !view?.knownNetwork || view.remembered || view.policy !== 'ask' || !view.firstRefused) return undefined;
  return { name: view.firstRefused.name, at: view.firstRefused.at };
}

/** One notice when a question appears (a new refusal: a new network, or its choice forgotten); none while it stays. */
export function localNamesNotice(prev: TrayState, next: TrayState): Notice | null {
  const q = next.localNames;
  if (!q || (prev.localNames?.name === q.name && prev.localNames.at === q.at)) return null;
  return {
    title: `This network has its own names (${q.name})`,
    body: `${q.name} didn't resolve: strict mode keeps this network's own names private until you choose. Send them to its resolver, unencrypted? Choose “Allow on this network” or “Keep private” in the tray.`,
  };
}

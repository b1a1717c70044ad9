/**
 * Settings export and import (a file the user keeps, or takes to another
 * machine): the settings, and the user's choices per remembered network
 * (issue 21, item 3: "exported with settings"). What dotstub measured on a
 * network (what worked, the round trip) is not exported: it is learned
 * again there.
 *
 *   GET  /api/settings/export   → dotstub-settings-<time>.json
 *   POST /api/settings/import   that file's JSON → the settings and choices applied
 *
 *   { "dotstub": "settings", "version": 1, "exportedAt": "…",
 *     "settings": { …GET /api/settings… },
 *     "networks": [ { "key": "<hashed gateway>", "label": "gateway 192.168.1.1", "localNames": "allow" } ] }
 *
 * An import is checked whole before anything is applied: a bad file gets a
 * 400 with a sentence and changes nothing.
 */
import { MAX_NETWORKS, seenHere } from '../../network/network-memory.js';
import { networksView, parseLocalNames, sentence } from './networks.js';
import type { StubProxy } from '../../dotstub.js';
import type { ExportedNetwork, ImportResult, Settings, SettingsExport } from '../api-types.js';

/** What a transfer needs of the control service (service.ts): the proxy, the settings, and their one checked update. */
interface TransferService {
  readonly proxy: StubProxy;
  settings(): Settings;
  readonly settingsActions: { update(raw: unknown): Promise<Settings> };
}

/** A network key as dotstub makes them (network-key.ts): 32 lowercase hexadecimal characters. */
const KEY = /^[0-9a-f]{32}$/;

export function exportSettings(service: TransferService): SettingsExport {
  const networks = networksView(service.proxy)
    .networks.filter((n) => n.localNames !== 'ask')
    .map((n) => ({ key: n.key, label: n.label, localNames: n.localNames }));
  return { dotstub: 'settings', version: 1, exportedAt: new Date().toISOString(), settings: service.settings(), networks };
}

function parseNetworks(raw: unknown): ExportedNetwork[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > MAX_NETWORKS) throw sentence('networks', `networks must be a list of at most ${MAX_NETWORKS} networks; nothing was changed`);
  return raw.map((n: unknown, i) => {
    const o = (typeof n === 'object' && n !== null ? n : {}) as Record<string, unknown>;
    if (typeof o.key !== 'string' || !KEY.test(o.key)) throw sentence(`networks.${i}.key`, `network ${i + 1} has no valid key (32 hexadecimal characters, as exported); nothing was changed`);
    if (o.label !== undefined && (typeof o.label !== 'string' || o.label.length > 200)) {
      throw sentence(`networks.${i}.label`, `network ${i + 1}'s label must be text of at most 200 characters; nothing was changed`);
    }
    return { key: o.key, label: typeof o.label === 'string' ? o.label : '', localNames: parseLocalNames(o.localNames, `networks.${i}.localNames`) };
  });
}

/** Applies an exported file: settings first (checked as PUT /api/settings checks them), then the networks' choices. */
export async function importSettings(service: TransferService, raw: unknown): Promise<ImportResult> {
  const o = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  if (o.dotstub !== 'settings' || o.version !== 1) {
    throw sentence('(body)', 'this is not a dotstub settings export (version 1): export one from Settings first; nothing was changed');
  }
  if (typeof o.settings !== 'object' || o.settings === null || Array.isArray(o.settings)) throw sentence('settings', 'the export has no settings object; nothing was changed');
  const networks = parseNetworks(o.networks);
  // The settings are checked (and applied) all or nothing; the networks were checked above.
  const settings = await service.settingsActions.update(o.settings);
  // The network we're on among them: its choice applies at once (the owner's 'changed').
  const network = service.proxy.network;
  let applied = 0;
  let waiting = 0;
  if (network.remembering) {
    const at = new Date().toISOString();
    for (const n of networks) {
      const known = network.remembered(n.key);
      const localNames = n.localNames === 'ask' ? undefined : n.localNames;
      if (known !== undefined && seenHere(known)) {
        network.remember(n.key, { localNames });
        applied++;
      } else {
        // Never on it here: the choice waits for it (the router reads it the day the key matches); its label is the export's, until then unseen.
        network.remember(n.key, { localNames, ...(n.label ? { label: n.label } : {}), importedAt: at });
        waiting++;
      }
    }
  }
  return { settings, networks: applied, waiting };
}

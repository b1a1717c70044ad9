/**
 * A retired preset saved in the config dir (issue 29: Mullvad closed its
 * public encrypted DNS on 2 Nov 2026), against the real app and control API:
 * the start moves the choice to the replacement the operator named, says so
 * in the timeline and in the status (the dashboard's banner), and a second
 * start does not say it again. The notice stays until dismissed.
 *
 * Quad9 is on the Internet, and a test sends nothing there: no warm
 * connection, no network watch, no query; only the control API is used.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { apiClient, startControl, tempConfigDir, type ControlHarness, type ControlHarnessOptions } from '../../test-support/control-harness.js';
import type { ResolversView, StatusView, TimelineEvent } from './api-types.js';

async function started(options: ControlHarnessOptions, check: (h: ControlHarness, api: ReturnType<typeof apiClient>) => Promise<void>): Promise<void> {
  const h = await startControl(options);
  try {
    await check(h, apiClient(h));
  } finally {
    await h.stop();
  }
}

/** The move, as said once in the log and the timeline. */
const MOVED = 'Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9';
/** The notice while the run uses Quad9 but has no connection to it (the test sends nothing there): not "now using Quad9". */
const WORDS = 'Mullvad DNS closed on 2 Nov 2026; your choice is now Quad9; not connected to it yet';

test('a config dir with Mullvad saved starts on Quad9 with an event and a notice, the move said before the proxy starts; the next start does not repeat the event', async () => {
  const configDir = tempConfigDir();
  fs.writeFileSync(path.join(configDir, 'resolvers.json'), JSON.stringify({ active: 'mullvad', custom: [] }));
  const said: string[] = [];
  const options: ControlHarnessOptions = {
    configDir,
    resolverArg: '127.0.0.1:9#dns.test',
    warm: false,
    watchNetwork: false,
    log: (line) => said.push(line),
    observe: (proxy) => proxy.once('listening', () => said.push('(listening)')),
  };

  await started(options, async (_h, api) => {
    // Told before the proxy could connect to the other operator (it connects once it listens).
    const told = said.findIndex((l) => l.startsWith(MOVED));
    expect(told).toBeGreaterThanOrEqual(0);
    expect(told).toBeLessThan(said.indexOf('(listening)'));
    const status = (await api.get('/api/status')).json<StatusView>();
    expect(status.resolver.id).toBe('quad9');
    expect(status.retiredNotice).toMatchObject({ from: 'mullvad', to: 'quad9', message: WORDS });
    const moves = (await api.get('/api/events/recent')).json<TimelineEvent[]>().filter((e) => e.kind === 'resolver');
    expect(moves).toEqual([expect.objectContaining({ from: 'mullvad', to: 'quad9', reason: MOVED })]);
    const list = (await api.get('/api/resolvers')).json<ResolversView>();
    expect(list.active).toBe('quad9');
    expect(list.resolvers.map((r) => r.id)).not.toContain('mullvad');
    // Choosing it again (an old script, a stale tray menu): refused with why and what instead, nothing changed.
    const again = await api.put('/api/resolvers/active', { id: 'mullvad' });
    expect(again.status).toBe(404);
    expect(again.text).toContain('Mullvad DNS closed on 2 Nov 2026');
  });
  expect(JSON.parse(fs.readFileSync(path.join(configDir, 'resolvers.json'), 'utf8'))).toMatchObject({ active: 'quad9' });

  said.length = 0;
  await started(options, async (_h, api) => {
    expect(said.some((l) => l.startsWith(MOVED))).toBe(false);
    const status = (await api.get('/api/status')).json<StatusView>();
    expect(status.resolver.id).toBe('quad9');
    // The timeline is kept across restarts: the first start's move is still there, and no second one was added.
    const moves = (await api.get('/api/events/recent')).json<TimelineEvent[]>().filter((e) => e.kind === 'resolver');
    expect(moves).toEqual([expect.objectContaining({ from: 'mullvad', to: 'quad9', reason: MOVED })]);
    // Not yet dismissed: the notice is still shown after a restart (the user may not have opened the dashboard).
    expect(status.retiredNotice?.message).toBe(WORDS);
    // The user picks another resolver: the notice no longer says the saved choice is Quad9.
    const added = (await api.post('/api/resolvers', { label: 'Lab here', address: '127.0.0.1', port: 9, authName: 'dns.test' })).json<{ id: string }>();
    expect((await api.put('/api/resolvers/active', { id: added.id })).status).toBe(200);
    expect((await api.get('/api/status')).json<StatusView>().retiredNotice?.message).toBe(
      'Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9; you have chosen Lab here since',
    );
    expect((await api.del('/api/resolvers/retired-notice')).status).toBe(204);
    expect((await api.get('/api/status')).json<StatusView>().retiredNotice).toBeNull();
  });

  await started(options, async (_h, api) => {
    expect((await api.get('/api/status')).json<StatusView>().retiredNotice).toBeNull();
  });
});

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

const WORDS = 'Mullvad DNS closed on 2 Nov 2026; now using Quad9';

test('a config dir with Mullvad saved starts on Quad9 with an event and a notice; the next start does not repeat the event', async () => {
  const configDir = tempConfigDir();
  fs.writeFileSync(path.join(configDir, 'resolvers.json'), JSON.stringify({ active: 'mullvad', custom: [] }));
  const options: ControlHarnessOptions = { configDir, resolverArg: '127.0.0.1:9#dns.test', warm: false, watchNetwork: false };

  await started(options, async (_h, api) => {
    const status = (await api.get('/api/status')).json<StatusView>();
    expect(status.resolver.id).toBe('quad9');
    expect(status.retiredNotice).toMatchObject({ from: 'mullvad', to: 'quad9', message: WORDS });
    const moves = (await api.get('/api/events/recent')).json<TimelineEvent[]>().filter((e) => e.kind === 'resolver');
    expect(moves).toEqual([expect.objectContaining({ from: 'mullvad', to: 'quad9', reason: WORDS })]);
    const list = (await api.get('/api/resolvers')).json<ResolversView>();
    expect(list.active).toBe('quad9');
    expect(list.resolvers.map((r) => r.id)).not.toContain('mullvad');
    // Choosing it again (an old script, a stale tray menu): refused with why and what instead, nothing changed.
    const again = await api.put('/api/resolvers/active', { id: 'mullvad' });
    expect(again.status).toBe(404);
    expect(again.text).toContain('Mullvad DNS closed on 2 Nov 2026');
  });
  expect(JSON.parse(fs.readFileSync(path.join(configDir, 'resolvers.json'), 'utf8'))).toMatchObject({ active: 'quad9' });

  await started(options, async (_h, api) => {
    const status = (await api.get('/api/status')).json<StatusView>();
    expect(status.resolver.id).toBe('quad9');
    // The timeline is kept across restarts: the first start's move is still there, and no second one was added.
    const moves = (await api.get('/api/events/recent')).json<TimelineEvent[]>().filter((e) => e.kind === 'resolver');
    expect(moves).toEqual([expect.objectContaining({ from: 'mullvad', to: 'quad9', reason: WORDS })]);
    // Not yet dismissed: the notice is still shown after a restart (the user may not have opened the dashboard).
    expect(status.retiredNotice?.message).toBe(WORDS);
    expect((await api.del('/api/resolvers/retired-notice')).status).toBe(204);
    expect((await api.get('/api/status')).json<StatusView>().retiredNotice).toBeNull();
  });

  await started(options, async (_h, api) => {
    expect((await api.get('/api/status')).json<StatusView>().retiredNotice).toBeNull();
  });
});

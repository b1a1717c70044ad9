/**
 * A saved choice of a retired preset (issue 29: Mullvad closed its public
 * encrypted DNS on 2 Nov 2026): moved to the replacement the operator named,
 * once, and said until the user dismisses it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { removeOnExit } from '../../test-support/temp.js';
import { ResolverStore } from './resolver-store.js';

function configDirWith(file: unknown): string {
  const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-store-')));
  fs.writeFileSync(path.join(dir, 'resolvers.json'), JSON.stringify(file));
  return dir;
}

const onDisk = (dir: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(dir, 'resolvers.json'), 'utf8')) as Record<string, unknown>;

test('a saved Mullvad moves to Quad9 at start, once, and the notice stays until dismissed', async () => {
  const dir = configDirWith({ active: 'mullvad', custom: [] });
  const first = new ResolverStore(dir);
  first.load();
  expect(first.persistedActive?.id).toBe('quad9');
  expect(first.problem).toBeNull();
  // Reading moves nothing on disk: the config dir may not be writable yet (the CLI writes once DNS listens).
  expect(onDisk(dir).active).toBe('mullvad');
  const moved = await first.settleRetired();
  expect(moved).toMatchObject({ id: 'mullvad', replacement: 'quad9', closed: '2026-11-02' });
  expect(onDisk(dir)).toMatchObject({ active: 'quad9', retiredNotice: { from: 'mullvad', to: 'quad9' } });
  expect(first.retiredNotice).toMatchObject({ from: 'mullvad', to: 'quad9' });

  const second = new ResolverStore(dir);
  second.load();
  expect(await second.settleRetired()).toBeNull();
  expect(second.persistedActive?.id).toBe('quad9');
  expect(second.retiredNotice).toMatchObject({ from: 'mullvad', to: 'quad9' });
  await second.dismissRetiredNotice();
  expect(second.retiredNotice).toBeNull();

  const third = new ResolverStore(dir);
  third.load();
  expect(third.retiredNotice).toBeNull();
  expect(onDisk(dir)).toEqual({ active: 'quad9', custom: [] });
});

test('a choice that was never a retired preset moves nothing', async () => {
  const dir = configDirWith({ active: 'cloudflare', custom: [] });
  const store = new ResolverStore(dir);
  store.load();
  expect(store.persistedActive?.id).toBe('cloudflare');
  expect(await store.settleRetired()).toBeNull();
  expect(store.retiredNotice).toBeNull();
  expect(onDisk(dir)).toEqual({ active: 'cloudflare', custom: [] });
});

test('"Switch back to …" survives a restart: the resolver in use before the last switch is saved with the choice', async () => {
  const dir = configDirWith({ active: 'quad9', custom: [] });
  const before = new ResolverStore(dir);
  before.load();
  expect(before.previous).toBeNull();
  await before.setActive('cloudflare', 'quad9');
  expect(onDisk(dir)).toMatchObject({ active: 'cloudflare', previous: 'quad9' });
  const after = new ResolverStore(dir);
  after.load();
  expect(after.persistedActive?.id).toBe('cloudflare');
  expect(after.previous).toBe('quad9');
  // Choosing the one in use again changes nothing to switch back to.
  await after.setActive('cloudflare', 'cloudflare');
  expect(after.previous).toBe('quad9');
  // A file without it (written before) reads as none.
  const old = new ResolverStore(configDirWith({ active: 'google', custom: [] }));
  old.load();
  expect(old.previous).toBeNull();
  expect(old.problem).toBeNull();
});

/**
 * The user's local-names choice, remembered per network (issue 21, item 3):
 * strict mode refuses local names on a network nobody decided on; "allow"
 * is written (atomically, 0600) under that network's key, and a restart on
 * the same network — or a rejoin — finds it before the first query; another
 * network still asks. The OS is read from the test's own files (a
 * resolv.conf with `search lan`), its tools not run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished, expect, test } from 'vitest';
import { NetworkMemory } from '../network/network-memory.js';
import { routingFor, type Routing } from './router.js';

function setup(): { dir: string; make: (key: string | null) => Routing } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-routing-memory-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.99.0.1\nsearch lan\n');
  const paths = { stateDirs: [], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: path.join(dir, 'none'), leases: [], resolvconfInterfaces: path.join(dir, 'none') };
  const make = (key: string | null): Routing => {
    const r = routingFor(
      { paths, localNames: 'ask', memoryFile: path.join(dir, 'config', 'networks.json'), networkKey: () => key, run: () => Promise.resolve(null) },
      { strict: () => true, localNames: () => 'ask' },
    ) as Routing;
    onTestFinished(() => r.stop());
    return r;
  };
  return { dir, make };
}

test('strict mode: local names refused until allowed for this network; the choice survives a restart on it; another network still asks', async () => {
  const { dir, make } = setup();
  const home = make('home-key');
  await home.start();
  expect(home.router.pick('printer.lan').kind).toBe('refused');
  expect(home.setLocalNames('allow')).toBe(true);
  expect(home.router.pick('printer.lan').kind).toBe('link');

  const file = path.join(dir, 'config', 'networks.json');
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(new NetworkMemory(file).get('home-key')).toMatchObject({ localNames: 'allow', localDomains: ['lan'] });

  const again = make('home-key'); // a restart, or a rejoin: read before the first query
  await again.start();
  expect(again.router.pick('printer.lan').kind).toBe('link');

  const cafe = make('cafe-key');
  await cafe.start();
  expect(cafe.router.pick('printer.lan').kind).toBe('refused');
  expect(new NetworkMemory(file).get('cafe-key')).toMatchObject({ localDomains: ['lan'] });
  expect(new NetworkMemory(file).get('cafe-key')?.localNames).toBeUndefined();

  // No gateway, no key: nothing can be remembered.
  const nowhere = make(null);
  await nowhere.start();
  expect(nowhere.setLocalNames('allow')).toBe(false);
});

test('a memory file that cannot be read counts as no memory, and the next choice rewrites it whole', () => {
  const { dir } = setup();
  const file = path.join(dir, 'networks.json');
  fs.writeFileSync(file, '{ not json');
  const memory = new NetworkMemory(file);
  expect(memory.get('k')).toBeUndefined();
  memory.update('k', { localNames: 'deny' });
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ version: 1, networks: { k: { localNames: 'deny' } } });
});

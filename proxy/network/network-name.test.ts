/**
 * The network's name for its label: NetworkManager's connection on the
 * default route's interface, else iwd's connected network, read from what
 * those tools print (recorded here; the routing table is a file of the
 * test's own). Nothing of this machine's is read or run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { defaultRouteInterface, networkName } from './network-name.js';
import { NetworkMemory } from './network-memory.js';
import { CurrentNetwork } from './current-network.js';

function dir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-netname-'));
  onTestFinished(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

function routeFile(iface: string | null): string {
  const f = path.join(dir(), 'route');
  fs.writeFileSync(f, `Iface\tDestination\tGateway \tFlags\n${iface ? `${iface}\t00000000\t0101A8C0\t0003\n` : ''}lo\t0000007F\t00000000\t0001\n`);
  return f;
}

/** `nmcli` and `iwctl` as they print; anything else fails as a missing program does. */
function tools(o: { nm?: string | null; iwd?: string | null }) {
  const asked: string[] = [];
  const run = (argv: readonly string[]): Promise<string | null> => {
    asked.push(argv.join(' '));
    if (argv[0] === 'nmcli') return Promise.resolve(o.nm ?? null);
    if (argv[0] === 'iwctl') return Promise.resolve(o.iwd ?? null);
    return Promise.resolve(null);
  };
  return { run, asked };
}

const IWCTL = `                                 Station: wlan0
--------------------------------------------------------------------------------
  Settable  Property              Value
--------------------------------------------------------------------------------
            Scanning              no
            State                 connected
            Connected network     \u001b[1mCafé Lumière Guest\u001b[0m
            IPv4 address          192.168.1.23
`;

test("NetworkManager's connection on the default route's interface names the network (the SSID for Wi-Fi); an escaped colon comes whole", async () => {
  const route = routeFile('wlp2s0');
  expect(defaultRouteInterface(route)).toBe('wlp2s0');
  const nm = tools({ nm: 'Café Lumière Guest\n' });
  expect(await networkName(nm.run, route)).toBe('Café Lumière Guest');
  expect(nm.asked).toEqual(['nmcli -g GENERAL.CONNECTION device show wlp2s0']);
  expect(await networkName(tools({ nm: 'Lab\\:5GHz\n' }).run, route)).toBe('Lab:5GHz');
});

test("iwd's connected network when NetworkManager doesn't run, colours and all; nothing when neither knows, or there is no default route", async () => {
  const route = routeFile('wlan0');
  const iwd = tools({ iwd: IWCTL });
  expect(await networkName(iwd.run, route)).toBe('Café Lumière Guest');
  expect(iwd.asked).toEqual(['nmcli -g GENERAL.CONNECTION device show wlan0', 'iwctl station wlan0 show']);
  // NetworkManager knows the device but it carries no connection ("--" or empty): not a name.
  expect(await networkName(tools({ nm: '--\n' }).run, route)).toBeNull();
  expect(await networkName(tools({}).run, route)).toBeNull();
  const none = tools({ nm: 'never asked' });
  expect(await networkName(none.run, routeFile(null))).toBeNull();
  expect(none.asked).toEqual([]);
});

test('a remembered network is labelled with its name where the OS knows one, its gateway where not; a name read late for a network left is not applied', async () => {
  const file = path.join(dir(), 'networks.json');
  let name: Promise<string | null> = Promise.resolve('Home Wi-Fi');
  let key = 'home-key';
  const r = new CurrentNetwork({ file, identify: () => ({ key, final: true }), gateway: () => '192.168.1.1', name: () => name });
  r.joined();
  r.opened('dot');
  await expect.poll(() => new NetworkMemory(file).get('home-key')?.label).toBe('Home Wi-Fi');

  // The café's name comes only after we left it: the office keeps its gateway label.
  let answer: (v: string | null) => void = () => undefined;
  name = new Promise((resolve) => (answer = resolve));
  key = 'cafe-key';
  r.joined();
  name = Promise.resolve(null);
  key = 'office-key';
  r.joined();
  r.opened('dot');
  answer('Café Lumière Guest');
  await new Promise((res) => setTimeout(res, 20));
  expect(new NetworkMemory(file).get('office-key')?.label).toBe('gateway 192.168.1.1');
  expect(new NetworkMemory(file).get('cafe-key')).toBeUndefined();
});

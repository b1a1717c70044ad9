/**
 * What the captive session records from a portal's answer, against a real
 * HTTP server on loopback standing for the network's interception: the
 * portal URL is the network's to send, so a sign-in address that isn't an
 * http(s) page of the network is never recorded (the API would hand it to
 * the desktop app's sign-in window), and the verdict says why in words.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { emptyDiscoveryPaths } from '../../../test-support/fake-portal.js';
import { freePort } from '../../../test-support/unbound.js';
import { CaptivePortal, type CaptiveEvent } from './session.js';

/** A network that intercepts every HTTP request with 302 to `location`. */
async function intercepting(location: string): Promise<number> {
  const server = http.createServer((_req, res) => res.writeHead(302, { location }).end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

async function portalAt(location: string): Promise<{ portal: CaptivePortal; events: CaptiveEvent[] }> {
  const port = await intercepting(location);
  const portal = new CaptivePortal({
    probes: { interceptionUrl: `http://127.0.0.1:${port}/`, checkUrl: `http://check.test:${await freePort()}/generate_204`, capportUrl: null },
    networkDns: () => [],
    paths: emptyDiscoveryPaths(),
    mode: () => 'strict',
    network: { current: () => null, signInAnswer: () => undefined, rememberSignIn: () => undefined },
    retryEncrypted: () => undefined,
    encryptedWorks: () => false,
  });
  onTestFinished(() => portal.stop());
  const events: CaptiveEvent[] = [];
  portal.on('event', (e) => events.push(e));
  return { portal, events };
}

describe('the portal URL a network sends', () => {
  test('302 Location: file:///home/user/.ssh/id_ed25519 is not recorded; the verdict says the network sent an unusable sign-in address', async () => {
    const { portal, events } = await portalAt('file:///home/user/.ssh/id_ed25519');
    const verdict = await portal.check();
    expect(verdict?.kind).toBe('unknown');
    expect(portal.active).toBe(false);
    expect(portal.view).toBeNull();
    expect(events).toHaveLength(1);
    const checked = events[0];
    expect(checked).toMatchObject({ type: 'checked', result: 'unknown' });
    expect(checked?.sentence).toMatch(/^A sign-in is wanted here, but the network sent an unusable sign-in address; dotstub neither records nor opens it \(/);
    expect(checked?.sentence).toContain('a file: address, not a web page');
    expect(JSON.stringify(events)).not.toContain('id_ed25519');
  });

  test("a page of this machine is no sign-in address either; the network's own page is recorded", async () => {
    const local = await portalAt('http://127.0.0.1:5380/#token=abc');
    await local.portal.check();
    expect(local.portal.view).toBeNull();
    expect(local.events[0]?.sentence).toContain('127.0.0.1 is this machine (loopback)');

    const real = await portalAt('http://login.hotspot.test/login');
    await real.portal.check();
    expect(real.portal.view).toMatchObject({ portalUrl: 'http://login.hotspot.test/login', portalHost: 'login.hotspot.test' });
    expect(real.events[0]).toMatchObject({ type: 'detected', portalHost: 'login.hotspot.test' });
  });
});

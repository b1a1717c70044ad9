/**
 * The AD bit (issue 33, item 3: "never set AD on an answer that did not
 * carry it from an authenticated upstream"), with Debian's unbound
 * validating a DNSSEC-signed lab zone (test-support/signed-zone.ts) and
 * dig, a real client, asking with +adflag:
 *
 *   - unbound itself says AD (the control: the zone validates);
 *   - through dotstub over a verified DoT connection, AD is relayed;
 *   - through an opportunistic connection that did not verify, and from the
 *     network's resolver in cleartext (degraded mode), the same answer
 *     comes without AD: nobody authenticated who said "validated".
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { parseResolverArg } from '../config/resolvers.js';
import { defaultConfig, startDotstub } from '../dotstub.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { testPki } from '../../test-support/certs.js';
import { waitFor, waitForEvent, waitForState } from '../../test-support/proxy-harness.js';
import { BOGUS_NAME, SIGNED_ADDRESS, SIGNED_NAME, SIGNED_ZONE, signedZoneConfig, signedZoneMissing } from '../../test-support/signed-zone.js';
import type { DnssecView } from '../privacy/dnssec-check.js';
import { skipWith } from '../../test-support/skips.js';
import { freePort, startUnbound, type UnboundServer } from '../../test-support/unbound.js';

const run = promisify(execFile);
const missing = signedZoneMissing() ?? (fs.existsSync('/usr/bin/dig') ? null : '/usr/bin/dig is missing (Debian package dnsutils)');

/** dig's header flags and first address for `name`, asked at 127.0.0.1:`port` with AD set (as glibc does with trust-ad). */
async function dig(port: number, adflag = true, name = SIGNED_NAME): Promise<{ flags: string[]; address: string | undefined; status: string | undefined }> {
  const { stdout } = await run('/usr/bin/dig', ['@127.0.0.1', '-p', String(port), adflag ? '+adflag' : '+noadflag', '+tries=1', '+time=3', '+noall', '+comments', '+answer', name, 'A']);
  const flags = /;; flags: ([a-z ]+);/.exec(stdout)?.[1]?.split(' ') ?? [];
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1];
  const address = /\sIN\s+A\s+(\S+)/.exec(stdout)?.[1];
  return { flags, address, status };
}

describe('the AD bit, with unbound validating a signed zone', skipWith(missing), () => {
  let unbound: UnboundServer;
  let plainPort: number;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-signed-'));
    plainPort = await freePort();
    unbound = await startUnbound({ names: 1, extraConfig: [`  interface: 127.0.0.1@${plainPort}`, ...signedZoneConfig(dir)] });
    // unbound reads the trust anchor's DNSKEY first: its first answers may come before the zone is secure.
    const deadline = Date.now() + 10_000;
    while (!(await dig(plainPort)).flags.includes('ad')) {
      if (Date.now() > deadline) throw new Error(`unbound never validated ${SIGNED_NAME}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  afterAll(async () => {
    await unbound?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function proxy(mode: AuthMode, trusted: boolean, extra: Partial<Parameters<typeof defaultConfig>[1]> = {}): Promise<{ port: number; proxy: Awaited<ReturnType<typeof startDotstub>>['proxy'] }> {
    const { proxy, bound } = await startDotstub(
      defaultConfig(parseResolverArg(unbound.resolverArg), {
        listen: [{ host: '127.0.0.1', port: 0 }],
        auth: { mode, ca: trusted ? [testPki().caPem] : [] },
        watchNetwork: false,
        ...extra,
      }),
    );
    onTestFinished(() => proxy.stop(300));
    return { port: bound[0]?.port ?? 0, proxy };
  }

  test('unbound itself: the signed name validates (AD) and the forged one is refused, the control for what follows', async () => {
    const direct = await dig(plainPort);
    expect(direct).toMatchObject({ status: 'NOERROR', address: SIGNED_ADDRESS });
    expect(direct.flags).toContain('ad');
    expect((await dig(plainPort, true, BOGUS_NAME)).status).toBe('SERVFAIL');
  });

  /** Waits for the proxy's DNSSEC measurement. */
  async function measured(p: Awaited<ReturnType<typeof proxy>>['proxy']): Promise<DnssecView> {
    await waitForEvent(p, 'dnssec', () => p.dnssec?.checkedAt !== null && p.dnssec?.checkedAt !== undefined, 10_000, 'the DNSSEC measurement');
    return p.dnssec as DnssecView;
  }
  const probes = { dnssecCheck: { signed: SIGNED_ZONE, bogus: BOGUS_NAME } };

  test('measured at the first authenticated connection: a validating resolver is "validated by … over an authenticated connection"', async () => {
    const { proxy: p } = await proxy('strict', true, probes);
    expect(p.dnssec).toMatchObject({ state: 'unknown', checkedAt: null });
    const view = await measured(p);
    expect(view).toMatchObject({ state: 'validated', resolverId: p.resolver.id });
    expect(view.sentence).toMatch(/^validated by .* over an authenticated connection/);
  });

  test('a resolver that does not validate (unbound without its validator) is said not to, and why', async () => {
    const plain = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-signed-novalidate-'));
    const novalidate = await startUnbound({ names: 1, extraConfig: signedZoneConfig(plain, false) });
    onTestFinished(async () => {
      await novalidate.stop();
      fs.rmSync(plain, { recursive: true, force: true });
    });
    const { proxy: px, bound } = await startDotstub(
      defaultConfig(parseResolverArg(novalidate.resolverArg), { listen: [{ host: '127.0.0.1', port: 0 }], auth: { mode: 'strict', ca: [testPki().caPem] }, watchNetwork: false, ...probes }),
    );
    onTestFinished(() => px.stop(300));
    const view = await measured(px);
    expect(view.state).toBe('not-validated');
    expect(view.sentence).toMatch(/does not validate DNSSEC: a signed name came back without the validated \(AD\) mark/);
    // And it passes on no AD of its own: the signed name's answer, unmarked.
    expect((await dig(bound[0]?.port ?? 0)).flags).not.toContain('ad');
  });

  test('through a verified DoT connection (strict): AD is relayed; a client that asks for neither AD nor DO gets none', async () => {
    const { port, proxy: p } = await proxy('strict', true);
    await waitForState(p, 'private', 5000);
    const asked = await dig(port);
    expect(asked).toMatchObject({ status: 'NOERROR', address: SIGNED_ADDRESS });
    expect(asked.flags).toContain('ad');
    // From the cache too.
    expect((await dig(port)).flags).toContain('ad');
    expect((await dig(port, false)).flags).not.toContain('ad');
  });

  test('opportunistic, over TLS that did not verify: the same answer, without AD (cached without it too)', async () => {
    const { port, proxy: p } = await proxy('opportunistic', false);
    await waitForState(p, 'private-unverified', 5000);
    for (let i = 0; i < 2; i++) {
      const asked = await dig(port);
      expect(asked).toMatchObject({ status: 'NOERROR', address: SIGNED_ADDRESS });
      expect(asked.flags).not.toContain('ad');
    }
  });

  test("the network's resolver in cleartext (degraded mode): the same answer, without AD", async () => {
    const closed = await freePort();
    const { port, proxy: p } = await (async () => {
      const { proxy: px, bound } = await startDotstub(
        defaultConfig(parseResolverArg(`127.0.0.1:${closed}#dns.test`), {
          listen: [{ host: '127.0.0.1', port: 0 }],
          auth: { mode: 'opportunistic', ca: [testPki().caPem] },
          watchNetwork: false,
          allowDegraded: true,
          networkDns: [`127.0.0.1:${plainPort}`],
          pool: { ...defaultConfig(parseResolverArg('quad9')).pool, maxBackoffMs: 1000 },
        }),
      );
      onTestFinished(() => px.stop(300));
      return { port: bound[0]?.port ?? 0, proxy: px };
    })();
    await waitForState(p, 'degraded', 5000);
    const records: string[] = [];
    p.on('query', (r) => records.push(r.source));
    const asked = await dig(port);
    expect(asked).toMatchObject({ status: 'NOERROR', address: SIGNED_ADDRESS });
    expect(asked.flags).not.toContain('ad');
    await waitFor(() => records.length > 0, 2000);
    expect(records).toEqual(['cleartext']);
  });
});

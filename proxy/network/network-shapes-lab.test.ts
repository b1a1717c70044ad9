/**
 * The network shapes people are on (issue 41; docs/networks.md#the-network-shapes-people-are-on),
 * each a lab in namespaces (test-support/netlab.ts) with dotstub's CLI in the
 * client as users run it (the network checks on), Debian's unbound serving
 * DoT in the server namespace and the network's own resolver in the router
 * (test-support/lab-dns-server.mjs on 10.53.1.1:53):
 *
 *   IPv4-only (no IPv6 address but link-local, no IPv6 route)
 *     → still answering 15 s after joining and at the next start; the
 *       interception check's IPv6 half says "not checked: no route" (before
 *       the fix the IPv6 probe's ENETUNREACH ended the process within a second)
 *   offline (no default route)  → says it, answers SERVFAIL at once, and is private within 1 s of a route
 *
 * Every address exists only inside the lab.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { netlabMissing, startNetlab, unboundIn, type Netlab, type NetlabProcess, type NetlabShape } from '../../test-support/netlab.js';
import { labClientArgs, startLabDotstub, type LabDotstub } from '../../test-support/lab-dotstub.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';
import { skipWith } from '../../test-support/skips.js';

const missing = netlabMissing() ?? unboundMissing();
const LISTEN_PORT = 5300;

interface ShapeLab {
  readonly lab: Netlab;
  readonly unbound: UnboundServer;
  readonly networkDns: NetlabProcess;
  close(): Promise<void>;
}

async function startShape(shape: NetlabShape): Promise<ShapeLab> {
  const lab = await startNetlab({ shape });
  const parts: { unbound?: UnboundServer; networkDns?: NetlabProcess } = {};
  const close = async (): Promise<void> => {
    await parts.networkDns?.stop();
    await parts.unbound?.stop();
    await lab.close();
  };
  try {
    const a = lab.addresses;
    parts.unbound = await startUnbound({ names: 10, port: 853, launch: unboundIn(lab.server, [a.server4, a.server6]) });
    parts.networkDns = lab.router.spawn([process.execPath, path.resolve(import.meta.dirname, '../../test-support/lab-dns-server.mjs'), a.routerClientSide4, '53', a.routerClientSide4]);
    await parts.networkDns.waitFor('READY');
    return { lab, unbound: parts.unbound, networkDns: parts.networkDns, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One lookup through dotstub in the client: dig's status, or 'NO ANSWER'. */
async function ask(lab: Netlab, name: string, timeS = 3): Promise<string> {
  const r = await lab.client.exec(['dig', '@127.0.0.1', '-p', String(LISTEN_PORT), `+time=${timeS}`, '+tries=1', '+nocookie', name, 'A']);
  return /status: (\w+)/.exec(r.stdout)?.[1] ?? 'NO ANSWER';
}

const alive = (d: LabDotstub): boolean => d.proc.child.exitCode === null && d.proc.child.signalCode === null;

describe('an IPv4-only network, the network checks on', skipWith(missing), () => {
  let s: ShapeLab;
  beforeAll(async () => {
    s = await startShape('ipv4-only');
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  test('dotstub is still answering 15 s after joining, and at the next start; the check says IPv6 was not checked and why', async () => {
    const dir = path.join(s.lab.dir, 'dotstub-ipv4-only');
    const args = labClientArgs(s.lab, { listenPort: LISTEN_PORT, ca: s.unbound.pki.caFile, mode: 'opportunistic' });
    for (const start of ['first start', 'next start'] as const) {
      const d = await startLabDotstub(s.lab, { dir, args });
      try {
        const here = await d.waitForHere((n) => n.dnsCheckedAt !== null, 10_000, 'checked for DNS interception');
        expect(here.dnsCheckNote, start).toBe('IPv6 not checked: no route to it from this network (ENETUNREACH)');
        // 15 s after it was ready (the first start) — the crash came within a second of the check.
        const until = d.readyAt + (start === 'first start' ? 15_000 : 5000);
        let asked = 0;
        while (Date.now() < until) {
          expect(await ask(s.lab, `n${asked % 10}.test`), `${start}, lookup ${asked + 1}`).toBe('NOERROR');
          expect(alive(d), `${start}: dotstub exited:\n${d.proc.output()}`).toBe(true);
          asked++;
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(d.proc.output()).not.toMatch(/ERR_SOCKET_BAD_PORT|RangeError|uncaught/i);
        console.log(`IPv4-only, ${start}: ${asked} lookups over ${((Date.now() - d.readyAt) / 1000).toFixed(1)} s, all NOERROR; check: ${here.dnsCheckNote}`);
      } finally {
        await d.stop();
      }
    }
  }, 90_000);
});

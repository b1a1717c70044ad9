/**
 * A hotel Wi-Fi in the network lab (netlab.ts), for the captive-portal tests
 * (proxy/privacy/captive-lab.test.ts, app/sign-in-lab.test.ts). In the
 * router: the hotspot's resolver (every name answered with the portal's
 * address), its sign-in server (fake-portal.ts: 302 to its login page until
 * POST /login), and the firewall: every HTTP request from the client,
 * 192.0.2.1 included, is DNAT'ed to the sign-in server; 853 and 443 to the
 * outside are dropped — or, with `intercept`, sent to a TLS server of the
 * hotspot's own with its own certificate. POST /login opens the firewall.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Netlab, NetlabProcess } from './netlab.js';
import { waitForListening } from './netlab.js';
import type { UnboundServer } from './unbound.js';

export interface Hotspot {
  /** The sign-in server: prints "LOGIN" when someone signs in. */
  readonly portal: NetlabProcess;
  /** Stops its programs and removes whatever rules the login didn't. */
  stop(): Promise<void>;
}

export async function startHotspot(lab: Netlab, opts: { variant: 'drop' | 'intercept'; loginHost: string; unbound: UnboundServer }): Promise<Hotspot> {
  const a = lab.addresses;
  const procs: NetlabProcess[] = [];
  const rules: string[][] = [];
  const stop = async (): Promise<void> => {
    for (const p of procs.reverse()) await p.stop();
    // Whatever the login didn't remove (a test that failed before it).
    for (const r of rules) await lab.router.exec(['iptables', ...r.map((x) => (x === '-A' ? '-D' : x))]);
  };
  try {
    const dns = lab.router.spawn([process.execPath, path.join(import.meta.dirname, 'lab-dns-server.mjs'), a.routerClientSide4, '53', a.routerClientSide4]);
    procs.push(dns);
    await dns.waitFor('READY');
    // All web traffic from the client goes to the sign-in server (192.0.2.1 included).
    rules.push(['-t', 'nat', '-A', 'PREROUTING', '-i', 'lan0', '-p', 'tcp', '--dport', '80', '-j', 'DNAT', '--to-destination', `${a.routerClientSide4}:80`]);
    if (opts.variant === 'drop') {
      rules.push(['-A', 'FORWARD', '-i', 'lan0', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], ['-A', 'FORWARD', '-i', 'lan0', '-p', 'tcp', '--dport', '443', '-j', 'DROP']);
    } else {
      const cert = path.join(lab.dir, 'hotspot.pem');
      const key = path.join(lab.dir, 'hotspot.key');
      fs.writeFileSync(cert, opts.unbound.pki.impostorCert);
      fs.writeFileSync(key, opts.unbound.pki.impostorKey, { mode: 0o600 });
      for (const port of [8853, 8443]) procs.push(lab.router.spawn(['openssl', 's_server', '-quiet', '-accept', `${a.routerClientSide4}:${port}`, '-cert', cert, '-key', key]));
      await waitForListening(lab.router, [8853, 8443]);
      rules.push(
        ['-t', 'nat', '-A', 'PREROUTING', '-i', 'lan0', '-p', 'tcp', '--dport', '853', '-j', 'DNAT', '--to-destination', `${a.routerClientSide4}:8853`],
        ['-t', 'nat', '-A', 'PREROUTING', '-i', 'lan0', '-p', 'tcp', '--dport', '443', '-j', 'DNAT', '--to-destination', `${a.routerClientSide4}:8443`],
      );
    }
    for (const r of rules) {
      const res = await lab.router.exec(['iptables', ...r]);
      if (res.code !== 0) throw new Error(`iptables ${r.join(' ')}: ${res.stderr}`);
    }
    // Signing in deletes the same rules (-A → -D): the hotspot lets the client out.
    const open = rules.map((r) => `iptables ${r.map((x) => (x === '-A' ? '-D' : x)).join(' ')}`).join(' && ');
    const portal = lab.router.spawn([process.execPath, '--import', 'tsx', path.join(import.meta.dirname, 'fake-portal.ts'), a.routerClientSide4, '80', opts.loginHost, open]);
    procs.push(portal);
    await portal.waitFor('READY', 20_000);
    return { portal, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A browser gets, through dotstub, the HTTPS record its TLS stack uses
 * (issue 33, item 2; https-records-unbound.test.ts compares the records
 * octet for octet with unbound's, this shows a browser using them). On a
 * throwaway machine (test-support/system-dns-lab.ts), real parts only:
 *
 *   LAN  veth0 10.99.0.2 ─ 10.99.0.1  Debian's unbound, DoT on 853: site.test has an
 *                                      A record (10.99.0.1) and an HTTPS record with
 *                                      alpn="h3,h2" and ech= (a config list made here,
 *                                      public name public.ech.test); on 443 a TLS
 *                                      server that reads the ClientHello and hangs up
 *   this machine: dotstub (the CLI) on 127.0.0.1:53, strict to unbound, and the
 *                 resolv.conf its `system-dns enable` writes
 *
 * Debian's Chromium loads https://site.test/ there. On Linux it resolves
 * with its own DNS client, reading resolv.conf (the AsyncDns feature, on by
 * default on Linux; it falls back to getaddrinfo, which never asks for
 * HTTPS records, only when it can't handle the system's configuration, e.g.
 * `options use-vc` or an nsswitch.conf it doesn't understand; `trust-ad`,
 * which dotstub writes, is fine). With UseDnsHttpsSvcb (on by default, also
 * over plain DNS) it asks for the HTTPS record of an https:// host beside
 * its addresses. So no switch is needed: Chromium as users run it. (With
 * --disable-features=AsyncDns it resolves through getaddrinfo, no type-65
 * question reaches dotstub, and this test fails at its first check.)
 *
 * What shows it: dotstub's query log has Chromium's type-65 question for
 * site.test, answered NOERROR; Chromium's net-log has the record's
 * endpoint metadata (ALPN, ECH config list) in its host resolver's results,
 * and its TLS socket's ECH config list (SSL_ECH_CONFIG_LIST), both equal
 * to the zone's ech= octets; and the ClientHello that reached 443 carries
 * ECH encrypted to that config (its config_id), with the config's public
 * name in the clear instead of site.test.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
import { labMissing, REPO, startLab, type Lab, type LabProcess } from '../../test-support/system-dns-lab.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = labMissing() ?? unboundMissing() ?? (fs.existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`);

/** The LAN's other end: the resolver, and the site's address. */
const LAN = '10.99.0.1';
const SITE = 'site.test';
const PUBLIC_NAME = 'public.ech.test';
const CONFIG_ID = 0x5a;
/** As DHCP wrote it, before dotstub takes over. */
const ORIGINAL = `# from DHCP\nnameserver ${LAN}\noptions timeout:1 attempts:1\n`;
/** As the lab tests launch Chromium (playwright.config.ts), headless. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--headless=new'];

const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);

/**
 * An ECHConfigList (draft-ietf-tls-esni, as BoringSSL reads it) with one
 * config: a real X25519 public key, HKDF-SHA256 with AES-128-GCM, `publicName`.
 */
function echConfigList(configId: number, publicName: string): Buffer {
  const jwk = crypto.generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' });
  const key = Buffer.from(jwk.x as string, 'base64url');
  const name = Buffer.from(publicName);
  const contents = Buffer.concat([
    Buffer.from([configId]),
    u16(0x0020), // DHKEM(X25519, HKDF-SHA256)
    u16(key.length),
    key,
    u16(4),
    u16(0x0001), // HKDF-SHA256
    u16(0x0001), // AES-128-GCM
    Buffer.from([0, name.length]), // maximum_name_length, public_name
    name,
    u16(0), // no extensions
  ]);
  const config = Buffer.concat([u16(0xfe0d), u16(contents.length), contents]);
  return Buffer.concat([u16(config.length), config]);
}

const ECH = echConfigList(CONFIG_ID, PUBLIC_NAME).toString('base64');
const RECORDS = [`${SITE}. 300 IN A ${LAN}`, `${SITE}. 300 IN HTTPS 1 . alpn="h3,h2" ipv4hint=${LAN} ech="${ECH}"`];

interface NetLogEvent {
  readonly type: number;
  readonly params?: unknown;
}

/** A net-log file as event name and params; read even if Chromium was stopped before it closed the file. */
function readNetLog(file: string): { name: string; params: unknown }[] {
  const text = fs.readFileSync(file, 'utf8');
  let log: { constants: { logEventTypes: Record<string, number> }; events: NetLogEvent[] };
  try {
    log = JSON.parse(text) as typeof log;
  } catch {
    log = JSON.parse(`${text.trimEnd().replace(/,$/, '')}]}`) as typeof log;
  }
  const names = new Map(Object.entries(log.constants.logEventTypes).map(([name, n]) => [n, name]));
  return log.events.map((e) => ({ name: names.get(e.type) ?? String(e.type), params: e.params }));
}

/** Every object under `v` that has `key`. */
function withKey(v: unknown, key: string, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(v)) for (const x of v) withKey(x, key, out);
  else if (v !== null && typeof v === 'object') {
    if (key in v) out.push(v as Record<string, unknown>);
    for (const x of Object.values(v)) withKey(x, key, out);
  }
  return out;
}

let lab: Lab | undefined;
let unbound: UnboundServer | undefined;
let proxy: LabProcess | undefined;
let hello: LabProcess | undefined;
let started = 0;

describe('Chromium resolving through dotstub gets the HTTPS record and uses its ECH config (lab)', skipWith(missing), () => {
  beforeAll(async () => {
    started = Date.now();
    lab = await startLab({ resolvConf: { text: ORIGINAL } });
    const l = lab;
    unbound = await startUnbound({ names: 0, port: 853, launch: l.unboundLaunch([LAN]), localData: RECORDS });
    hello = l.spawn([process.execPath, path.join(REPO, 'test-support', 'lab-tls-hello.mjs'), LAN, '443']);
    await hello.waitFor('READY', 10_000);
    proxy = l.spawnDotstub([
      '--listen', '127.0.0.1:53', '--resolver', `${LAN}:853#dns.test`, '--ca', unbound.pki.caFile, '--strict', '--log',
      '--control', '127.0.0.1:0', '--config-dir', '/run/dotstub-config', '--no-portal-check',
    ]);
    await proxy.waitFor('dashboard at', 30_000);
    // The takeover as the service does it: this resolv.conf is what Chromium reads.
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', '/run/dotstub-state', '--check-name', '']);
    expect(on.code, on.stderr).toBe(0);
    expect(fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
  });
  afterAll(async () => {
    await unbound?.stop();
    await lab?.close();
    console.log(`https-records chromium lab: ${Date.now() - started} ms in all`);
  });

  test(`https://${SITE}/: Chromium asks dotstub for the HTTPS record, and its TLS stack encrypts the ClientHello to the zone's ECH config`, async () => {
    const l = lab as Lab;
    const netLog = path.join(l.dir, 'netlog.json');
    const home = path.join(l.dir, 'chromium-home');
    fs.mkdirSync(home);
    // --dump-dom: load the page, print it, exit (the load fails: the server hangs up after the ClientHello).
    const run = await l.exec(
      [CHROMIUM, ...CHROMIUM_ARGS, `--user-data-dir=${path.join(home, 'profile')}`, `--log-net-log=${netLog}`, '--net-log-capture-mode=Everything', '--dump-dom', `https://${SITE}/`],
      { timeoutMs: 30_000, env: { HOME: home, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home } },
    );
    expect(run.code, `Chromium did not exit by itself:\n${run.stderr.slice(-3000)}`).not.toBeNull();
    const p = proxy as LabProcess;

    // 1. dotstub: Chromium's own DNS client asked for type 65 (getaddrinfo never does), answered NOERROR.
    const asked = p.output().split('\n').filter((line) => new RegExp(` (udp|tcp) ${SITE.replace('.', '\\.')} HTTPS `).test(line));
    console.log(`dotstub's log, type 65:\n  ${asked.join('\n  ')}`);
    expect(asked.length, `no HTTPS query for ${SITE} in dotstub's log:\n${p.output()}`).toBeGreaterThan(0);
    expect(asked.some((line) => / HTTPS NOERROR /.test(line)), asked.join('\n')).toBe(true);

    // 2. Chromium's host resolver: the record's endpoint metadata, with the zone's ECH config list and ALPN.
    const events = readNetLog(netLog);
    const resolved = events
      .filter((e) => e.name.startsWith('HOST_RESOLVER') && JSON.stringify(e.params ?? null).includes(SITE))
      .flatMap((e) => withKey(e.params, 'ech_config_list').map((m) => ({ event: e.name, metadata: m })));
    const firstOfEach = [...new Map(resolved.map((r) => [r.event, r])).values()];
    console.log(`Chromium's host resolver, ${SITE}'s HTTPS metadata (${resolved.length} events, the first of each kind):\n  ${firstOfEach.map((m) => JSON.stringify(m)).join('\n  ')}`);
    expect(resolved.length, `no HTTPS metadata for ${SITE} in the net-log; its host resolver events: ${[...new Set(events.map((e) => e.name).filter((n) => n.startsWith('HOST_RESOLVER')))].join(', ')}`).toBeGreaterThan(0);
    for (const { metadata } of resolved) {
      expect(metadata.ech_config_list).toBe(ECH);
      // The record's ALPN, and http/1.1, the default ALPN a record without no-default-alpn implies (RFC 9460 section 7.1.1).
      expect(metadata.supported_protocol_alpns).toEqual(['h3', 'h2', 'http/1.1']);
    }

    // 3. Its TLS socket was given that config list...
    const tlsEch = events.filter((e) => e.name === 'SSL_ECH_CONFIG_LIST').map((e) => (e.params as { bytes?: string }).bytes);
    console.log(`Chromium's TLS socket, SSL_ECH_CONFIG_LIST: ${tlsEch.join(', ')}`);
    expect(tlsEch.length).toBeGreaterThan(0);
    for (const bytes of tlsEch) expect(bytes).toBe(ECH);

    // 4. ...and the ClientHello on the wire used it: encrypted to its config_id, the public name in the clear.
    const hellos = [...(hello as LabProcess).output().matchAll(/^HELLO (.*)$/gm)].map((m) => JSON.parse(m[1] as string) as { sni: string | null; ech: { type: number; configId?: number } | null });
    console.log(`ClientHellos at ${LAN}:443: ${hellos.map((h) => JSON.stringify(h)).join(', ')}`);
    expect(hellos.length, (hello as LabProcess).output()).toBeGreaterThan(0);
    for (const h of hellos) {
      expect(h.sni).toBe(PUBLIC_NAME);
      expect(h.ech).toMatchObject({ type: 0, configId: CONFIG_ID });
    }
  });
});

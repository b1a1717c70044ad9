/**
 * DNS correctness through dotstub, answer by answer against unbound itself
 * (the same unbound answers plain DNS over UDP on its DoT port): the
 * question's octets survive the trip, EDNS is checked as RFC 6891 says,
 * oversized UDP answers lose the additional section before they get TC, and
 * meta query types are answered locally without touching the shared TLS
 * connection.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TcpClient, UdpClient, type Answer } from '../../test-support/dns-client.js';
import { startProxy, waitFor, type Harness } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';

const run = promisify(execFile);

let unbound: UnboundServer;
let h: Harness;

/**
 * Eight mail hosts for mail.example., an authoritative zone (unbound adds
 * additional records to auth-zone answers, not to local-data): the MX
 * answer fits 512 octets, its additional section does not.
 */
const MAIL_HOSTS = Array.from({ length: 8 }, (_, i) => `mx${i}.mail.example.`);
let zoneDir: string;

beforeAll(async () => {
  zoneDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-zone-'));
  const zoneFile = path.join(zoneDir, 'mail.example.zone');
  fs.writeFileSync(
    zoneFile,
    [
      'mail.example. 300 IN SOA ns.mail.example. admin.mail.example. 1 3600 600 86400 300',
      'mail.example. 300 IN NS ns.mail.example.',
      'ns.mail.example. 300 IN A 198.51.100.53',
      ...MAIL_HOSTS.map((m, i) => `mail.example. 300 IN MX ${i} ${m}`),
      ...MAIL_HOSTS.flatMap((m, i) => [`${m} 300 IN A 198.51.100.${i + 1}`, `${m} 300 IN AAAA 2001:db8:1::${i + 1}`]),
      '',
    ].join('\n'),
  );
  unbound = await startUnbound({
    names: 10,
    minimalResponses: false,
    localData: [
      // Octets ≥ 0x80 and a dot inside a label: legal (RFC 2181 §11), and not UTF-8.
      '\\200.test. 300 IN A 192.0.2.200',
      'caf\\233.test. 300 IN A 192.0.2.201',
      'a\\.b.test. 300 IN A 192.0.2.202',
    ],
    extraConfig: [
      '  local-zone: "mail.example." transparent',
      'auth-zone:',
      '  name: "mail.example."',
      `  zonefile: "${zoneFile}"`,
      '  for-downstream: yes',
      '  for-upstream: no',
      '  fallback-enabled: no',
    ],
  });
  h = await startProxy({ resolverArg: unbound.resolverArg });
  await waitFor(() => h.proxy.privacy.state.state === 'private', 10_000, 'private state');
});
afterAll(async () => {
  await h?.stop();
  await unbound?.stop();
  fs.rmSync(zoneDir, { recursive: true, force: true });
});

interface DigResult {
  readonly status: string;
  readonly flags: string[];
  readonly answer: string[];
  readonly additional: string[];
  readonly counts: string;
}

/** dig against `port`; status, header flags and the answer section (TTLs dropped). */
async function dig(port: number, ...args: string[]): Promise<DigResult> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=3', '+nocookie', ...args]);
  const status = /status: (\w+)/.exec(stdout)?.[1] ?? `no status in:\n${stdout}`;
  const flags = (/;; flags: ([^;]*);/.exec(stdout)?.[1] ?? '').trim().split(/\s+/);
  const counts = /QUERY: \d+, ANSWER: \d+, AUTHORITY: \d+, ADDITIONAL: \d+/.exec(stdout)?.[0] ?? '';
  const records = (name: string): string[] =>
    (new RegExp(`;; ${name} SECTION:\\n([\\s\\S]*?)\\n\\n`).exec(stdout)?.[1] ?? '')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(/\s+/).filter((_, i) => i !== 1).join(' '))
      // unbound rotates the order of records within an RRset.
      .sort();
  return { status, flags, answer: records('ANSWER'), additional: records('ADDITIONAL'), counts };
}

/** The same dig through dotstub and straight to unbound. */
async function both(...args: string[]): Promise<{ proxy: DigResult; unbound: DigResult }> {
  const [proxy, direct] = await Promise.all([dig(h.port, ...args), dig(unbound.port, ...args)]);
  return { proxy, unbound: direct };
}

function rawQuery(name: string, type: dnsPacket.RecordType, additionals: dnsPacket.Answer[], id: number): Buffer {
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }], additionals });
}

const opt = (version = 0): dnsPacket.Answer =>
  ({ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: version, flags: 0, flag_do: false, options: [] }) as dnsPacket.Answer;

/** The extended rcode of an answer (RFC 6891 §6.1.3): header rcode plus the OPT's upper bits. */
function extendedRcode(a: Answer): number {
  const o = a.packet.additionals?.find((r) => r.type === 'OPT');
  const upper = o && 'extendedRcode' in o ? o.extendedRcode : 0;
  return (upper << 4) | (a.raw.readUInt16BE(2) & 0xf);
}

describe('the question travels as octets', () => {
  test('labels with octets ≥ 0x80 or a dot inside resolve as they do at unbound, over UDP and TCP', async () => {
    for (const name of ['\\200.test', 'caf\\233.test', 'a\\.b.test']) {
      const r = await both(name, 'A');
      expect(r.unbound.status).toBe('NOERROR');
      expect(r.proxy).toEqual(r.unbound);
      const tcp = await dig(h.port, '+tcp', name, 'A');
      expect(tcp).toEqual(r.unbound);
    }
  });

  test('the question is echoed octet for octet, 0x20 case included', async () => {
    const c = await UdpClient.open(h.port);
    try {
      const q = rawQuery('n1.test', 'A', [opt()], 4321);
      // 'N1.TeSt' with a 0x80 octet in front: \x01\x80 \x02N1 \x04TeSt
      const question = Buffer.from([1, 0x80, 2, 0x4e, 0x31, 4, 0x54, 0x65, 0x53, 0x74, 0, 0, 1, 0, 1]);
      const msg = Buffer.concat([q.subarray(0, 12), question, q.subarray(12 + 13)]);
      const a = await c.sendRaw(msg);
      expect(a.raw.subarray(12, 12 + question.length)).toEqual(question);
      expect(a.rcode).toBe('NXDOMAIN');
    } finally {
      c.close();
    }
  });
});

describe('EDNS (RFC 6891)', () => {
  test('EDNS version 1 gets BADVERS with version 0, as from unbound', async () => {
    const r = await both('+edns=1', '+noednsneg', 'n1.test');
    expect(r.unbound.status).toBe('BADVERS');
    expect(r.proxy).toEqual(r.unbound);
  });

  test('two OPT records get FORMERR, as from unbound; one OPT is answered', async () => {
    const viaProxy = await UdpClient.open(h.port);
    const direct = await UdpClient.open(unbound.port);
    try {
      const two = rawQuery('n1.test', 'A', [opt(), opt()], 77);
      const [p, u] = await Promise.all([viaProxy.sendRaw(two), direct.sendRaw(two)]);
      expect(extendedRcode(u)).toBe(1);
      expect(extendedRcode(p)).toBe(1);
      expect(p.packet.id).toBe(77);
      const one = await viaProxy.sendRaw(rawQuery('n1.test', 'A', [opt()], 78));
      expect(one.rcode).toBe('NOERROR');
    } finally {
      viaProxy.close();
      direct.close();
    }
  });
});

describe('UDP answers too big for the client', () => {
  test('without EDNS, the additional records that fit 512 octets are kept, whole RRsets, as unbound keeps them, before TC is ever set (RFC 2181 §9)', async () => {
    const r = await both('+noedns', '+ignore', 'mail.example', 'MX');
    expect(r.unbound.flags).not.toContain('tc');
    expect(r.proxy.flags).not.toContain('tc');
    expect(r.proxy.answer).toEqual(r.unbound.answer);
    expect(r.proxy.answer).toHaveLength(MAIL_HOSTS.length);
    // The glue that fits comes through: as many additional records as unbound itself sends in 512 octets.
    expect(r.unbound.additional.length).toBeGreaterThan(0);
    expect(r.proxy.additional.length).toBe(r.unbound.additional.length);
    expect(r.proxy.counts).toBe(r.unbound.counts);
    // With room for everything, the additional records come through.
    const big = await dig(h.port, '+bufsize=4096', 'mail.example', 'MX');
    expect(big.counts).toMatch(/ADDITIONAL: (1[6-9]|[2-9]\d)/);
  });

  test('when even the answer section does not fit, the client gets TC and the whole answer over TCP', async () => {
    const r = await both('+noedns', '+ignore', 'big.test', 'TXT');
    expect(r.proxy.flags).toContain('tc');
    expect(r.unbound.flags).toContain('tc');
  });
});

describe('meta query types are answered locally', () => {
  test('OPT, TSIG, TKEY, MAILA, MAILB → FORMERR, AXFR/IXFR → REFUSED, on both transports, header as unbound answers it; nothing reaches the resolver', async () => {
    const udp = await UdpClient.open(h.port);
    const tcp = await TcpClient.open(h.port);
    // unbound's TCP port speaks TLS here: its plain answers come over UDP.
    const direct = await UdpClient.open(unbound.port);
    try {
      // Prime the connection, then note how much has gone to the resolver.
      expect((await udp.query('n1.test')).rcode).toBe('NOERROR');
      const [conn] = h.proxy.connections();
      const bytesBefore = h.proxy.counters.bytesToResolver;
      const cases: [dnsPacket.RecordType | number, string][] = [
        [41, 'FORMERR'],
        [249, 'FORMERR'],
        [250, 'FORMERR'],
        [253, 'FORMERR'],
        [254, 'FORMERR'],
        ['AXFR', 'REFUSED'],
        ['IXFR', 'REFUSED'],
      ];
      // RA, AA and TC as the header says them; RD is the asker's.
      const bits = (raw: Buffer): string => ['ra', 'aa', 'tc'].filter((_, i) => raw.readUInt16BE(2) & [0x0080, 0x0400, 0x0200][i]!).join(' ');
      for (const [type, rcode] of cases) {
        const typeName = typeof type === 'number' ? (`UNKNOWN_${type}` as dnsPacket.RecordType) : type;
        for (const transport of ['udp', 'tcp'] as const) {
          const a = await (transport === 'udp' ? udp : tcp).query('n1.test', { type: typeName, edns: null });
          expect({ type, transport, rcode: a.rcode, bits: bits(a.raw) }).toEqual({ type, transport, rcode, bits: '' });
          expect(a.packet.questions?.[0]?.name).toBe('n1.test');
          // The resolver itself says the same.
          const u = await direct.query('n1.test', { type: typeName, edns: null });
          expect({ type, transport, rcode: u.rcode, bits: bits(u.raw) }).toEqual({ type, transport, rcode: a.rcode, bits: bits(a.raw) });
        }
      }
      expect(h.proxy.counters.bytesToResolver).toBe(bytesBefore);
      // The shared connection is untouched and still answers.
      expect((await tcp.query('n2.test')).rcode).toBe('NOERROR');
      expect(h.proxy.connections()[0]?.id).toBe(conn?.id);
    } finally {
      udp.close();
      tcp.close();
      direct.close();
    }
  });
});

/**
 * Why an answer was blocked (issue 46), against a filtering resolver of our
 * own on a real socket (test-support/fault-server.ts): a name it refuses
 * with NXDOMAIN and an Extended DNS Error 15 "malware: lab list" (as Quad9
 * does), and one it answers 0.0.0.0 / :: without saying anything. Through
 * dotstub, a real kdig gets the EDE as the resolver sent it; the query
 * record, the `--log` line, the API's filter and the CSV say why.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Answer, OptAnswer } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startControl, apiClient, type ControlHarness } from '../test-support/control-harness.js';
import { TcpClient, UdpClient } from '../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../test-support/fault-server.js';
import { startProxy, waitForState, type Harness } from '../test-support/proxy-harness.js';
import { EXPORT_COLUMNS } from './control/api-client/query-export.js';
import type { QueryPage } from './control/api-types.js';
import { formatRecord, type QueryRecord } from './engine/query-record.js';

const run = promisify(execFile);
const TEXT = 'malware: lab list';
/** The EDE option's octets as the lab resolver writes them: INFO-CODE 15, then the text. */
const EDE_DATA = Buffer.concat([Buffer.from([0, 15]), Buffer.from(TEXT, 'utf8')]);

let server: FaultServer;

beforeAll(async () => {
  server = await startFaultServer();
  server.behaviour.blocks.set('malware.lab', { kind: 'ede', code: 15, text: TEXT });
  server.behaviour.blocks.set('ads.lab', { kind: 'zero-address' });
});
afterAll(async () => {
  await server?.stop();
});

function kdig(port: number, ...args: string[]): Promise<string> {
  return run('kdig', ['@127.0.0.1', '-p', String(port), '+retry=0', '+timeout=3', ...args]).then((r) => r.stdout);
}

function optOf(packet: { readonly additionals?: readonly Answer[] | undefined }): { code: number; data?: Buffer }[] {
  const opt = packet.additionals?.find((r): r is OptAnswer => r.type === 'OPT');
  return (opt?.options ?? []) as { code: number; data?: Buffer }[];
}

describe('a filtering resolver, through dotstub', () => {
  let h: Harness;
  const records: QueryRecord[] = [];

  beforeAll(async () => {
    h = await startProxy({ resolverArg: server.resolverArg });
    h.proxy.on('query', (r) => records.push(r));
    await waitForState(h.proxy, 'private', 10_000);
  });
  afterAll(async () => {
    await h?.stop();
  });

  const last = (name: string): QueryRecord | undefined => records.filter((r) => r.name === name).at(-1);

  test('kdig gets the EDE, over UDP and TCP, from the resolver and from the cache, octet for octet; the record says why', async () => {
    for (const transport of ['+notcp', '+tcp', '+notcp']) {
      const out = await kdig(h.port, transport, '+edns', 'malware.lab', 'A');
      expect(out).toMatch(/status: NXDOMAIN/);
      expect(out).toContain(`EDE: 15 (Blocked): '${TEXT}'`);
    }
    // The octets: the resolver's EDE as it sent it, the TLS hop's padding and keepalive gone (this much held before issue 46).
    const udp = await UdpClient.open(h.port);
    const tcp = await TcpClient.open(h.port);
    try {
      for (const answer of [await udp.query('malware.lab', { type: 'AAAA' }), await tcp.query('malware.lab', { type: 'AAAA' })]) {
        const options = optOf(answer.packet);
        expect(options.map((o) => o.code)).toEqual([15]);
        expect(options[0]?.data?.equals(EDE_DATA)).toBe(true);
        // And in the message's bytes: code 15, length, then the resolver's octets.
        const wire = Buffer.concat([Buffer.from([0, 15, 0, EDE_DATA.length]), EDE_DATA]);
        expect(answer.raw.subarray(answer.raw.length - wire.length).equals(wire)).toBe(true);
      }
    } finally {
      udp.close();
      tcp.close();
    }
    const sources = records.filter((r) => r.name === 'malware.lab' && r.type === 'A').map((r) => r.source);
    expect(sources).toEqual(['upstream', 'cache', 'cache']);
    for (const r of records.filter((x) => x.name === 'malware.lab')) {
      expect(r.rcode).toBe('NXDOMAIN');
      expect(r.extendedErrors).toEqual([{ code: 15, name: 'Blocked', text: TEXT }]);
      expect(r.blocked).toEqual({ kind: 'ede', code: 15, name: 'Blocked', text: TEXT });
    }
    expect(formatRecord(last('malware.lab') as QueryRecord)).toContain(`NXDOMAIN`);
    expect(formatRecord(last('malware.lab') as QueryRecord)).toMatch(/ blocked: EDE 15 \(Blocked\) 'malware: lab list'$/);
  });

  test('0.0.0.0 and :: without an EDE are marked blocked; a real address is not', async () => {
    expect((await kdig(h.port, '+short', 'ads.lab', 'A')).trim()).toBe('0.0.0.0');
    expect((await kdig(h.port, '+short', 'ads.lab', 'AAAA')).trim()).toBe('::');
    expect((await kdig(h.port, '+short', 'q7.lab', 'A')).trim()).toBe('192.0.2.8');
    const ads = records.filter((r) => r.name === 'ads.lab');
    expect(ads.map((r) => r.blocked)).toEqual([
      { kind: 'zero-address', address: '0.0.0.0' },
      { kind: 'zero-address', address: '::' },
    ]);
    expect(ads.every((r) => r.extendedErrors === undefined)).toBe(true);
    expect(formatRecord(ads[0] as QueryRecord)).toMatch(/ blocked: answered 0\.0\.0\.0$/);
    expect(last('q7.lab')?.blocked).toBeUndefined();
  });
});

describe('the API: blocked=, the records and the CSV', () => {
  let c: ControlHarness;

  beforeAll(async () => {
    c = await startControl({ resolverArg: server.resolverArg, forceResolver: true });
    await waitForState(c.proxy, 'private', 10_000);
  });
  afterAll(async () => {
    await c?.stop();
  });

  test('the filter picks what the resolver blocked, what answered 0.0.0.0, or both; the CSV has the columns', async () => {
    await kdig(c.dnsPort, '+edns', 'malware.lab');
    await kdig(c.dnsPort, 'ads.lab');
    await kdig(c.dnsPort, 'q9.lab');
    const api = apiClient(c);
    const names = async (q: string): Promise<(string | null)[]> => (await api.get(`/api/queries${q}`)).json<QueryPage>().records.map((r) => r.name);
    expect(await names('')).toEqual(['q9.lab', 'ads.lab', 'malware.lab']);
    expect(await names('?blocked=resolver')).toEqual(['malware.lab']);
    expect(await names('?blocked=null-address')).toEqual(['ads.lab']);
    expect(await names('?blocked=1')).toEqual(['ads.lab', 'malware.lab']);
    expect((await api.get('/api/queries?blocked=maybe')).status).toBe(400);
    const page = (await api.get('/api/queries?blocked=resolver')).json<QueryPage>();
    expect(page.records[0]).toMatchObject({ rcode: 'NXDOMAIN', extendedErrors: [{ code: 15, name: 'Blocked', text: TEXT }], blocked: { kind: 'ede', code: 15, name: 'Blocked', text: TEXT } });

    const csv = (await api.get('/api/queries/export?format=csv&blocked=1')).text.trim().split('\r\n');
    const header = (csv[0] as string).split(',');
    expect(header).toEqual([...EXPORT_COLUMNS]);
    const cell = (line: string, col: string): string | undefined => line.split(',')[header.indexOf(col)];
    const [ads, malware] = [csv[1] as string, csv[2] as string];
    expect(['blocked', 'edeCode', 'edeName', 'edeText'].map((k) => cell(malware, k))).toEqual(['ede', '15', 'Blocked', TEXT]);
    expect(['blocked', 'edeCode', 'edeName', 'edeText'].map((k) => cell(ads, k))).toEqual(['zero-address', '', '', '']);
  });
});

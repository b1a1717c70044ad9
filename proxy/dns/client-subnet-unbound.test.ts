/**
 * No client subnet leaves (issue 33, item 1), proven against a resolver that
 * adds one: Debian's unbound with its subnetcache module and
 * `send-client-subnet` towards an authoritative server of our own, which
 * records the EDNS Client Subnet option of every query it receives. That is
 * what Google and AdGuard do for the authoritative servers they ask: a
 * query that carries no ECS gets the asker's own /24.
 *
 * - Asked directly (no ECS), unbound sends the authoritative server the
 *   asker's /24: the lab can see a subnet leave.
 * - Through dotstub, which sends ECS with source prefix 0 (RFC 7871
 *   §7.1.2: "don't use my subnet"), the authoritative server receives no
 *   address bits, with the cache on and off.
 * - A client's own ECS (10.1.2.0/24) is stripped: that subnet never reaches
 *   the resolver, nor, through it, the authoritative server.
 */
import dgram from 'node:dgram';
import dnsPacket, { type OptAnswer } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { UdpClient } from '../../test-support/dns-client.js';
import { startProxy, type Harness } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';

const OPTION_CLIENT_SUBNET = 8;

/** What the authoritative server saw for one query name: the ECS option, as "family/source-prefix address", or "none". */
const seen = new Map<string, string[]>();
let auth: dgram.Socket;
let unbound: UnboundServer;
let proxy: Harness;

function subnetOf(options: readonly { code: number; family?: number; sourcePrefixLength?: number; ip?: string }[] | undefined): string {
  const ecs = options?.find((o) => o.code === OPTION_CLIENT_SUBNET);
  return ecs === undefined ? 'none' : `${ecs.family ?? '?'}/${ecs.sourcePrefixLength ?? '?'} ${ecs.sourcePrefixLength ? ecs.ip : ''}`.trim();
}

beforeAll(async () => {
  // The authoritative server for ecs.test: every name has A 192.0.2.53; it records each query's ECS.
  auth = dgram.createSocket('udp4');
  auth.on('message', (msg, from) => {
    const q = dnsPacket.decode(msg);
    const question = q.questions?.[0];
    if (!question) return;
    const opt = q.additionals?.find((r): r is OptAnswer => r.type === 'OPT');
    const name = question.name.toLowerCase();
    seen.set(name, [...(seen.get(name) ?? []), subnetOf(opt?.options as never)]);
    const answer = dnsPacket.encode({
      id: q.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: q.questions,
      answers: question.type === 'A' ? [{ type: 'A', name: question.name, ttl: 300, data: '192.0.2.53' }] : [],
      ...(opt ? { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] } : {}),
    });
    auth.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => auth.bind(0, '127.0.0.1', resolve));
  const authPort = auth.address().port;
  unbound = await startUnbound({
    names: 1,
    extraConfig: [
      // The operator's side: adds the asker's subnet for the authoritative servers it names, as the big resolvers do.
      '  module-config: "subnetcache iterator"',
      '  send-client-subnet: 127.0.0.1',
      '  max-client-subnet-ipv4: 24',
      '  do-not-query-localhost: no',
      '  local-zone: "ecs.test." transparent',
      'stub-zone:',
      '  name: "ecs.test."',
      `  stub-addr: 127.0.0.1@${authPort}`,
    ],
  });
  proxy = await startProxy({ resolverArg: unbound.resolverArg });
});

afterAll(async () => {
  await proxy?.stop();
  await unbound?.stop();
  auth?.close();
});

async function ask(port: number, name: string, clientSubnet?: string): Promise<string> {
  const c = await UdpClient.open(port);
  try {
    const q = dnsPacket.encode({
      type: 'query',
      id: 7,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: 'A', name }],
      additionals: [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: 1232,
          extendedRcode: 0,
          ednsVersion: 0,
          flags: 0,
          flag_do: false,
          options: clientSubnet === undefined ? [] : [{ code: OPTION_CLIENT_SUBNET, family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: clientSubnet } as never],
        },
      ],
    });
    const a = await c.sendRaw(q);
    expect(a.rcode).toBe('NOERROR');
    const first = a.packet.answers?.[0];
    return first?.type === 'A' ? first.data : '';
  } finally {
    c.close();
  }
}

/** unbound's plain DNS port is its DoT port's too (do-udp: yes on the same interface line). */
const direct = (): number => unbound.port;

describe('no client subnet leaves (unbound with subnetcache, an authoritative server that records ECS)', () => {
  test('asked directly with no ECS, the resolver hands the authoritative server the asker’s /24: the lab sees a subnet leave', async () => {
    expect(await ask(direct(), 'direct.ecs.test')).toBe('192.0.2.53');
    expect(seen.get('direct.ecs.test')).toEqual(['1/24 127.0.0.0']);
  });

  test('through dotstub, the authoritative server receives no address bits: dotstub asks with source prefix 0', async () => {
    expect(await ask(proxy.port, 'through.ecs.test')).toBe('192.0.2.53');
    const got = seen.get('through.ecs.test') ?? [];
    expect(got.length).toBeGreaterThan(0);
    for (const s of got) expect(s === 'none' || /^\d\/0$/.test(s), `the authoritative server saw ECS ${s}`).toBe(true);
  });

  test("a client's own subnet is stripped: 10.1.2.0/24 reaches neither the resolver nor the authoritative server", async () => {
    expect(await ask(proxy.port, 'client.ecs.test', '10.1.2.0')).toBe('192.0.2.53');
    const got = seen.get('client.ecs.test') ?? [];
    expect(got.length).toBeGreaterThan(0);
    for (const s of got) {
      expect(s).not.toContain('10.1.2');
      expect(s === 'none' || /^\d\/0$/.test(s), `the authoritative server saw ECS ${s}`).toBe(true);
    }
  });
});

/**
 * The engine with its name router: the networks' own names go to their
 * link's resolver (Debian's unbound on loopback answering plain DNS, standing
 * in for the LAN's), marked in the query record as answered unencrypted;
 * everything else to the chosen resolver (an upstream of the test's own that
 * records what it was asked); search-suffixed public names, .local and
 * unowned private reverse lookups never leave; strict mode sends local names
 * nowhere until the user allows them for this network.
 */
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { answerTo } from '../../test-support/upstream-requests.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { readUpstreamAnswer } from '../dns/upstream-answer.js';
import { NameOwners, type LocalNamesPolicy } from '../network/name-owners.js';
import type { Upstream, UpstreamCallback, UpstreamRequest } from '../upstream/upstream.js';
import { Engine } from './engine.js';
import type { QueryRecord } from './query-record.js';
import { NameRouter } from './router.js';

/** The chosen encrypted resolver, as far as the router can tell: answers 192.0.2.53 to everything and keeps the names. */
class PublicUpstream implements Upstream {
  readonly name = 'public';
  readonly asked: string[] = [];
  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    this.asked.push(req.question.key.name);
    req.trace.attempts = 1;
    done(req, null, readUpstreamAnswer(answerTo(req.wire, '192.0.2.53'), req.question));
  }
  async close(): Promise<void> {}
  destroy(): void {}
}

let lan: UnboundServer;
beforeAll(async () => {
  lan = await startUnbound({ names: 0, extra: { 'printer.lan.': '10.99.0.7', 'nas.home.arpa.': '10.99.0.8' }, localData: ['8.0.99.10.in-addr.arpa. 300 IN PTR nas.home.arpa.'] });
});
afterAll(async () => {
  await lan.stop();
});

function setup(policy: LocalNamesPolicy, strict: boolean, recordNames = true): { ask: (name: string, type?: 'A' | 'PTR') => Promise<{ rcode: string; answers: string[]; record: QueryRecord }>; pub: PublicUpstream; router: NameRouter } {
  const pub = new PublicUpstream();
  const router = new NameRouter({ strict: () => strict, localNames: () => policy, recordNames: () => recordNames });
  const servers = [{ host: lan.host, port: lan.port }];
  // The stand-in LAN resolver is on loopback, not a private address: it owns its reverse zone by a routing domain, as a link can say.
  const owners = [
    { suffix: 'lan', servers, link: 'veth0', source: 'test', search: true },
    { suffix: '99.10.in-addr.arpa', servers, link: 'veth0', source: 'test', search: false },
  ];
  router.setOwners(new NameOwners(owners, { servers, link: 'veth0', source: 'test' }));
  const engine = new Engine(pub, { padding: true, recordNames: true, keepBrowsersOnStub: true }, undefined, router);
  let id = 1;
  const ask = (name: string, type: 'A' | 'PTR' = 'A'): Promise<{ rcode: string; answers: string[]; record: QueryRecord }> =>
    new Promise((resolve) => {
      let record: QueryRecord | undefined;
      engine.once('query', (r) => (record = r));
      engine.handle(dnsPacket.encode({ type: 'query', id: id++, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] }), 'udp', (buf) => {
        const msg = dnsPacket.decode(buf) as { rcode?: string; answers?: { data?: unknown }[] };
        setImmediate(() => resolve({ rcode: msg.rcode ?? '', answers: (msg.answers ?? []).map((a) => String(a.data)), record: record as QueryRecord }));
      });
    });
  return { ask, pub, router };
}

describe('the engine routes by name owner', () => {
  test("local names are answered by the LAN's resolver and marked unencrypted; public names go to the chosen resolver", async () => {
    const { ask, pub, router } = setup('ask', false);
    const printer = await ask('printer.lan');
    expect(printer.answers).toEqual(['10.99.0.7']);
    expect(printer.record.source).toBe('cleartext');
    expect(printer.record.route).toEqual({ kind: 'link', link: 'veth0', suffix: 'lan', servers: `127.0.0.1:${lan.port}`, source: 'test' });
    expect((await ask('nas.home.arpa')).answers).toEqual(['10.99.0.8']);
    expect((await ask('8.0.99.10.in-addr.arpa', 'PTR')).answers).toEqual(['nas.home.arpa']);
    expect((await ask('www.example.com')).answers).toEqual(['192.0.2.53']);
    expect(pub.asked).toEqual(['www.example.com']);
    router.destroy();
  });

  test('a search-suffixed public name, a .local name and a special reverse zone are answered NXDOMAIN here and sent nowhere', async () => {
    const { ask, pub, router } = setup('allow', true);
    for (const name of ['www.public.test.lan', 'printer.local', '1.0.0.127.in-addr.arpa']) {
      const r = await ask(name);
      expect(r.rcode).toBe('NXDOMAIN');
      expect(r.record.source).toBe('local');
      expect(r.record.route?.kind).toBe('answered');
    }
    expect(pub.asked).toEqual([]);
    router.destroy();
  });

  test("strict mode: local names get SERVFAIL with the reason until allowed for this network; allowed, they resolve", async () => {
    const asked = setup('ask', true);
    const r = await asked.ask('printer.lan');
    expect(r.rcode).toBe('SERVFAIL');
    expect(r.record.error).toBe('DOTSTUB_LOCAL_NAMES_NOT_ALLOWED');
    expect(r.record.route).toEqual({ kind: 'refused', why: "lan is a local name (veth0): strict mode sends local names to the network's resolver only once you allow it for this network" });
    expect(asked.pub.asked).toEqual([]);
    // What the tray asks about: the first name refused on this network.
    expect(asked.router.firstRefused).toMatchObject({ name: 'printer.lan', suffix: 'lan' });
    // With query names not recorded (the user's setting), only its network's suffix is kept.
    const unnamed = setup('ask', true, false);
    expect((await unnamed.ask('Printer.lan')).rcode).toBe('SERVFAIL');
    expect(unnamed.router.firstRefused).toMatchObject({ name: '*.lan', suffix: 'lan' });
    expect(JSON.stringify(unnamed.router.firstRefused)).not.toMatch(/printer/i);
    expect((await setup('deny', false).ask('printer.lan')).rcode).toBe('SERVFAIL');
    const allowed = setup('allow', true);
    expect((await allowed.ask('printer.lan')).answers).toEqual(['10.99.0.7']);
    allowed.router.destroy();
  });
});

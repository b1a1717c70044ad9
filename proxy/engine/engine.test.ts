/**
 * The engine against an upstream of our own (an Upstream that answers from
 * a table, or fails with a typed error, when the test says): the engine's
 * side of the contract — one reply per query, the client's ID restored,
 * SERVFAIL for errors, FORMERR for malformed queries, the query record.
 */
import dnsPacket from 'dns-packet';
import { describe, expect, test } from 'vitest';
import { answerTo } from '../../test-support/upstream-requests.js';
import { readUpstreamAnswer } from '../dns/upstream-answer.js';
import { ConnectFailedError, type DotstubError } from '../errors.js';
import type { Upstream, UpstreamCallback, UpstreamRequest } from '../upstream/upstream.js';
import { Engine } from './engine.js';
import type { QueryRecord } from './query-record.js';

class TableUpstream implements Upstream {
  readonly held: { req: UpstreamRequest; done: UpstreamCallback<UpstreamRequest> }[] = [];
  readonly wires: Buffer[] = [];
  constructor(readonly name: string) {}
  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    this.wires.push(Buffer.from(req.wire));
    req.trace.attempts = 1;
    req.trace.resolverId = this.name;
    req.trace.connectionId = 7;
    req.trace.reused = true;
    this.held.push({ req, done: done as UpstreamCallback<UpstreamRequest> });
  }
  answerAll(): void {
    for (const { req, done } of this.held.splice(0)) {
      req.wire.writeUInt16BE(4242, 2); // the upstream's own ID on the wire
      done(req, null, readUpstreamAnswer(answerTo(req.wire, '192.0.2.53'), req.question));
    }
  }
  failAll(err: DotstubError): void {
    for (const { req, done } of this.held.splice(0)) done(req, err, null);
  }
  async close(): Promise<void> {}
  destroy(): void {}
}

function query(name: string, id: number): Buffer {
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] });
}

function setup(): { engine: Engine; up: TableUpstream; replies: Buffer[]; records: QueryRecord[] } {
  const up = new TableUpstream('table');
  const engine = new Engine(up, { padding: true, recordNames: true, keepBrowsersOnStub: true });
  const records: QueryRecord[] = [];
  engine.on('query', (r) => records.push(r));
  return { engine, up, replies: [], records };
}

describe('engine', () => {
  test("relays the upstream's answer with the client's ID and records how it went", async () => {
    const { engine, up, replies, records } = setup();
    engine.handle(query('www.example.test', 31337), 'udp', (b) => replies.push(b));
    expect(engine.inFlight).toBe(1);
    up.answerAll();
    await engine.idle();
    expect(replies).toHaveLength(1);
    const answer = dnsPacket.decode(replies[0] as Buffer);
    expect(answer.id).toBe(31337);
    expect(answer.answers?.[0]).toMatchObject({ type: 'A', name: 'www.example.test', data: '192.0.2.53' });
    expect(records[0]).toMatchObject({ name: 'www.example.test', rcode: 'NOERROR', source: 'upstream', resolverId: 'table', connectionId: 7, reused: true, attempts: 1 });
    expect(engine.counters).toMatchObject({ queries: 1, answers: 1, connectionHits: 1, servfails: 0 });
  });

  test('the record names HTTPS and SVCB questions as people know them (the log, the type filter, the CSV), not UNKNOWN_65', async () => {
    const { engine, up, records } = setup();
    for (const [type, id] of [[65, 1], [64, 2], [1, 3]] as const) {
      const q = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: `UNKNOWN_${type}` as 'A', name: 'site.example.test' }] });
      engine.handle(q, 'udp', () => undefined);
    }
    up.failAll(new ConnectFailedError('nothing here'));
    await engine.idle();
    expect(records.map((r) => r.type)).toEqual(['HTTPS', 'SVCB', 'A']);
  });

  test('a typed upstream error becomes SERVFAIL with its code in the record', () => {
    const { engine, up, replies, records } = setup();
    engine.handle(query('down.test', 9), 'tcp', (b) => replies.push(b));
    up.failAll(new ConnectFailedError('cannot connect: refused'));
    expect(dnsPacket.decode(replies[0] as Buffer)).toMatchObject({ id: 9, rcode: 'SERVFAIL' });
    expect(records[0]).toMatchObject({ source: 'servfail', error: 'DOTSTUB_CONNECT_FAILED' });
    expect(engine.inFlight).toBe(0);
  });

  test('a malformed query gets FORMERR and never reaches the upstream; a headerless one is dropped', () => {
    const { engine, up, replies } = setup();
    const twoQuestions = dnsPacket.encode({ type: 'query', id: 5, questions: [{ type: 'A', name: 'a.test' }, { type: 'A', name: 'b.test' }] });
    engine.handle(twoQuestions, 'udp', (b) => replies.push(b));
    engine.handle(Buffer.alloc(5), 'udp', (b) => replies.push(b));
    expect(up.wires).toHaveLength(0);
    expect(replies).toHaveLength(1);
    expect(dnsPacket.decode(replies[0] as Buffer)).toMatchObject({ id: 5, rcode: 'FORMERR' });
    expect(engine.counters.malformed).toBe(2);
  });

  test('configure() applies to the next query: padding off sends unpadded queries', () => {
    const { engine, up } = setup();
    engine.handle(query('a.test', 1), 'udp', () => undefined);
    engine.configure({ padding: false });
    engine.handle(query('a.test', 2), 'udp', () => undefined);
    expect(((up.wires[0] as Buffer).length - 2) % 128).toBe(0);
    expect(((up.wires[1] as Buffer).length - 2) % 128).not.toBe(0);
    expect(engine.options.recordNames).toBe(true);
  });

  test('setUpstream(): queries in flight finish on the old upstream, new ones go to the new', async () => {
    const { engine, up, replies } = setup();
    engine.handle(query('old.test', 1), 'udp', (b) => replies.push(b));
    const next = new TableUpstream('next');
    engine.setUpstream(next);
    engine.handle(query('new.test', 2), 'udp', (b) => replies.push(b));
    expect([up.held.length, next.held.length]).toEqual([1, 1]);
    up.answerAll();
    next.answerAll();
    await engine.idle();
    expect(replies.map((r) => dnsPacket.decode(r).id).sort()).toEqual([1, 2]);
  });

  test('resolver.arpa (RFC 9462) gets NODATA and Firefox’s canary NXDOMAIN, answered here and never forwarded', () => {
    const { engine, up, replies, records } = setup();
    const ask = (name: string, type: 'A' | 'SVCB' = 'A', id = 1): void => {
      engine.handle(dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: type as 'A', name }] }), 'udp', (b) => replies.push(b));
    };
    ask('_dns.resolver.arpa', 'SVCB', 1);
    ask('resolver.arpa', 'A', 2);
    ask('use-application-dns.net', 'A', 3);
    expect(up.wires).toHaveLength(0);
    const decoded = replies.map((r) => dnsPacket.decode(r));
    expect(decoded.map((d) => [d.id, (d as { rcode?: string }).rcode, d.answers?.length, d.flag_aa])).toEqual([
      [1, 'NOERROR', 0, true],
      [2, 'NOERROR', 0, true],
      [3, 'NXDOMAIN', 0, true],
    ]);
    expect(records.map((r) => r.source)).toEqual(['local', 'local', 'local']);
    // With the setting off, the canary goes to the resolver like any name.
    engine.configure({ keepBrowsersOnStub: false });
    ask('use-application-dns.net', 'A', 4);
    expect(up.wires).toHaveLength(1);
    // Names that merely end alike are not special.
    ask('notresolver.arpa', 'A', 5);
    expect(up.wires).toHaveLength(2);
  });

  test("dotstub's own liveness check is answered here, tagged internal, and counted apart from the user's queries", () => {
    const { engine, up, replies, records } = setup();
    const ask = (name: string, id: number): void => {
      engine.handle(dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }), 'udp', (b) => replies.push(b));
    };
    ask('liveness.dotstub.resolver.arpa', 1);
    ask('LIVENESS.dotstub.resolver.arpa.', 2);
    ask('_dns.resolver.arpa', 3);
    expect(up.wires).toHaveLength(0);
    expect(replies).toHaveLength(3);
    expect(records.map((r) => [r.source, r.internal ?? false])).toEqual([
      ['local', true],
      ['local', true],
      ['local', false],
    ]);
    expect(engine.counters.internalChecks).toBe(2);
    expect(engine.counters.queries).toBe(1);
  });
});

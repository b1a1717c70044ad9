import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { describe, expect, test } from 'vitest';
import { QuestionMismatchError } from '../errors.js';
import { encodeClientAnswer } from './client-answer.js';
import { parseClientQuery, plausibleQuery, type ClientQuery } from './client-query.js';
import { servfail } from './local-reply.js';
import { readUpstreamAnswer } from './upstream-answer.js';
import { encodeUpstreamQuery } from './upstream-query.js';

const asked = (q: ClientQuery) => ({ key: q.question, bytes: q.questionBytes });

function query(name: string, opts: { id?: number; edns?: number | null; dnssecOk?: boolean; type?: 'A' | 'TXT' | 'MX' } = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: opts.id ?? 1234,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: opts.type ?? 'A', name }],
    additionals:
      opts.edns === null
        ? []
        : [{ type: 'OPT', name: '.', udpPayloadSize: opts.edns ?? 1232, extendedRcode: 0, ednsVersion: 0, flags: opts.dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: false, options: [{ code: 10, data: Buffer.alloc(8, 1) } as never] }],
  });
}

function parsed(buf: Buffer): ClientQuery {
  const r = parseClientQuery(buf);
  if (!r.ok) throw new Error(r.reason);
  return r.query;
}

function upstreamAnswer(q: ClientQuery, id: number, answers: Answer[], options: { code: number; length?: number; timeout?: number }[] = [{ code: 12, length: 300 }]): Buffer {
  return dnsPacket.encode({
    type: 'response',
    id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ type: q.question.type as 'A', name: q.question.name }],
    answers,
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: options as never }],
  });
}

describe('queries upstream', () => {
  test('padded to a multiple of 128 octets, keepalive asked, client cookie not forwarded, DO kept, ECS says no subnet', () => {
    for (const name of ['a.test', 'x'.repeat(60) + '.example.org', 'n1.test']) {
      const q = parsed(query(name, { dnssecOk: true }));
      const { wire: framed, padding } = encodeUpstreamQuery(q, { pad: true, keepalive: true });
      expect(framed.readUInt16BE(0)).toBe(framed.length - 2);
      const wire = framed.subarray(2);
      expect(wire.length % 128).toBe(0);
      expect(padding).toBeGreaterThan(0);
      const back = dnsPacket.decode(wire);
      const opt = back.additionals?.find((r) => r.type === 'OPT');
      const codes = opt && 'options' in opt ? opt.options.map((o) => o.code) : [];
      expect(codes).toEqual([8, 11, 12]);
      // RFC 7871 §7.1.2: source prefix 0, scope 0, no address octets (option length 4).
      const ecs = opt && 'options' in opt ? opt.options.find((o) => o.code === 8) : undefined;
      expect(ecs).toMatchObject({ family: 1, sourcePrefixLength: 0, scopePrefixLength: 0 });
      expect(wire.includes(Buffer.from([0, 8, 0, 4, 0, 1, 0, 0]))).toBe(true);
      expect(opt && 'flags' in opt ? opt.flags & dnsPacket.DNSSEC_OK : 0).toBe(dnsPacket.DNSSEC_OK);
      expect(back.questions?.[0]?.name).toBe(name);
    }
    const plain = encodeUpstreamQuery(parsed(query('a.test')), { pad: false, keepalive: false });
    expect(plain.padding).toBe(0);
    expect(plain.wire.length - 2).toBeLessThan(128);
  });
});

describe('answers to the client', () => {
  const a: Answer = { type: 'A', name: 'a.test', ttl: 60, data: '192.0.2.1' };

  test("the client's ID is restored and the TLS-hop padding and keepalive are stripped", () => {
    const q = parsed(query('a.test', { id: 777 }));
    const raw = upstreamAnswer(q, 5, [a], [{ code: 12, length: 300 }, { code: 11, timeout: 1200 }]);
    const up = readUpstreamAnswer(raw, asked(q));
    expect(up.keepaliveMs).toBe(120_000);
    const rawLength = raw.length;
    const { buf, truncated } = encodeClientAnswer(q, up, 1232);
    expect(truncated).toBe(false);
    const out = dnsPacket.decode(buf);
    expect(out.id).toBe(777);
    expect(out.answers?.[0]).toMatchObject({ name: 'a.test', data: '192.0.2.1' });
    const opt = out.additionals?.find((r) => r.type === 'OPT');
    expect(opt && 'options' in opt ? opt.options : ['missing']).toEqual([]);
    expect(buf.length).toBeLessThan(rawLength - 290);
  });

  test('a client without EDNS gets no OPT record (RFC 6891 §7)', () => {
    const q = parsed(query('a.test', { edns: null }));
    const raw = upstreamAnswer(q, 5, [a]);
    const out = dnsPacket.decode(encodeClientAnswer(q, readUpstreamAnswer(raw, asked(q)), 512).buf);
    expect(out.additionals).toEqual([]);
    expect(out.answers).toHaveLength(1);
  });

  test('too big for the client\'s UDP size: TC set, question kept, no records', () => {
    const q = parsed(query('big.test', { edns: null, type: 'TXT' }));
    const txt: Answer[] = Array.from({ length: 10 }, (_, i) => ({ type: 'TXT', name: 'big.test', ttl: 1, data: 'x'.repeat(90) + i }));
    const raw = upstreamAnswer(q, 9, txt);
    const { buf, truncated } = encodeClientAnswer(q, readUpstreamAnswer(raw, asked(q)), 512);
    expect(truncated).toBe(true);
    const out = dnsPacket.decode(buf);
    expect(out.flag_tc).toBe(true);
    expect(out.id).toBe(1234);
    expect(out.questions?.[0]?.name).toBe('big.test');
    expect(out.answers).toEqual([]);
  });

  test('an answer for another question, or a garbled one, is refused', () => {
    const q = parsed(query('a.test'));
    const other = parsed(query('b.test'));
    expect(() => readUpstreamAnswer(upstreamAnswer(other, 5, []), asked(q))).toThrow(QuestionMismatchError);
    // Same name with different case is the same question (RFC 4343).
    const upper = parsed(query('A.TeSt'));
    expect(readUpstreamAnswer(upstreamAnswer(upper, 5, [a]), asked(q)).rcode).toBe(0);
    const cut = upstreamAnswer(q, 5, [a]).subarray(0, 40);
    expect(() => readUpstreamAnswer(cut, asked(q))).toThrow(/malformed answer/);
  });

  test('an OPT record that is not last is handled by re-encoding', () => {
    const q = parsed(query('a.test', { id: 31 }));
    const raw = dnsPacket.encode({
      type: 'response',
      id: 5,
      flags: dnsPacket.RECURSION_AVAILABLE,
      questions: [{ type: 'A', name: 'a.test' }],
      answers: [a],
      additionals: [
        { type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [{ code: 12, length: 40 } as never] },
        { type: 'A', name: 'ns.test', ttl: 5, data: '192.0.2.9' },
      ],
    });
    const out = dnsPacket.decode(encodeClientAnswer(q, readUpstreamAnswer(raw, asked(q)), 1232).buf);
    expect(out.id).toBe(31);
    expect(out.additionals?.map((r) => r.type)).toEqual(['A', 'OPT']);
    const opt = out.additionals?.[1];
    expect(opt && 'options' in opt ? opt.options : ['missing']).toEqual([]);
  });

  test('question matching folds ASCII letters only; other octets, type and class compare exactly', () => {
    const raw = (name: Buffer, type = 1): Buffer => {
      const out = Buffer.alloc(12 + name.length + 4);
      out.writeUInt16BE(0x8180, 2);
      out.writeUInt16BE(1, 4);
      name.copy(out, 12);
      out.writeUInt16BE(type, 12 + name.length);
      out.writeUInt16BE(1, 14 + name.length);
      return out;
    };
    const q = (name: Buffer, type = 1): ClientQuery => parsed(Buffer.from(raw(name, type)).fill(0, 2, 4));
    const asciiUpper = Buffer.from([1, 0x41, 4, ...Buffer.from('test'), 0]);
    const asciiLower = Buffer.from([1, 0x61, 4, ...Buffer.from('test'), 0]);
    expect(readUpstreamAnswer(raw(asciiLower), asked(q(asciiUpper))).rcode).toBe(0);
    // 0xC0 and 0xE0 differ by the ASCII case bit but are not letters (RFC 4343 §3).
    const latinUpper = Buffer.from([1, 0xc0, 4, ...Buffer.from('test'), 0]);
    const latinLower = Buffer.from([1, 0xe0, 4, ...Buffer.from('test'), 0]);
    expect(readUpstreamAnswer(raw(latinUpper), asked(q(latinUpper))).rcode).toBe(0);
    expect(() => readUpstreamAnswer(raw(latinLower), asked(q(latinUpper)))).toThrow(QuestionMismatchError);
    expect(() => readUpstreamAnswer(raw(asciiLower, 28), asked(q(asciiLower)))).toThrow(QuestionMismatchError);
    // A label boundary moved ("a.b" vs "a\.b") is another name.
    const dotted = Buffer.from([3, 0x61, 0x2e, 0x62, 0]);
    const split = Buffer.from([1, 0x61, 1, 0x62, 0]);
    expect(() => readUpstreamAnswer(raw(split), asked(q(dotted)))).toThrow(QuestionMismatchError);
  });

  test('SERVFAIL echoes ID, question and EDNS', () => {
    const q = parsed(query('a.test', { id: 99 }));
    const out = dnsPacket.decode(servfail(q)) as ReturnType<typeof dnsPacket.decode> & { rcode: string };
    expect(out.id).toBe(99);
    expect(out.rcode).toBe('SERVFAIL');
    expect(out.questions?.[0]?.name).toBe('a.test');
    expect(out.additionals?.[0]?.type).toBe('OPT');
  });
});

describe('client input', () => {
  test('responses are dropped, other opcodes get NOTIMP, garbage gets FORMERR', () => {
    const resp = Buffer.from(query('a.test'));
    resp.writeUInt16BE(resp.readUInt16BE(2) | 0x8000, 2);
    expect(parseClientQuery(resp)).toMatchObject({ ok: false, reply: null });
    const notify = Buffer.from(query('a.test'));
    notify.writeUInt16BE((notify.readUInt16BE(2) & ~0x7800) | (4 << 11), 2);
    const r = parseClientQuery(notify);
    // A NOTIFY is answered (NOTIMP, its ID kept), never dropped.
    expect(r).toMatchObject({ ok: false, reply: expect.any(Buffer) });
    const reply = !r.ok ? r.reply : null;
    expect(reply?.readUInt16BE(0)).toBe(notify.readUInt16BE(0));
    expect((reply?.readUInt16BE(2) ?? 0) & 0xf).toBe(4);
    expect(parseClientQuery(Buffer.alloc(5)).ok).toBe(false);
  });
});

describe('client queries, octet by octet', () => {
  const header = (id: number, counts: [number, number, number, number]): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt16BE(id, 0);
    h.writeUInt16BE(0x0100, 2);
    counts.forEach((c, i) => h.writeUInt16BE(c, 4 + i * 2));
    return h;
  };
  const question = (name: number[], type = 1): Buffer => Buffer.from([...name, type >> 8, type & 0xff, 0, 1]);
  const optRecord = (version = 0, owner: number[] = [0]): Buffer => Buffer.from([...owner, 0, 41, 0x04, 0xd0, 0, version, 0x80, 0, 0, 0]);
  const rcodeOf = (r: ReturnType<typeof parseClientQuery>): number | undefined => {
    if (r.ok || !r.reply) return undefined;
    const opt = dnsPacket.decode(r.reply).additionals?.find((x) => x.type === 'OPT');
    return ((opt && 'extendedRcode' in opt ? opt.extendedRcode : 0) << 4) | (r.reply.readUInt16BE(2) & 0xf);
  };
  const name = [1, 0x80, 4, ...Buffer.from('test'), 0];

  test('a label with octets ≥ 0x80 is kept as sent and shown with \\DDD escapes', () => {
    const r = parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 0]), question([3, 0x61, 0x2e, 0xff, ...name.slice(2)])]));
    if (!r.ok) throw new Error(r.reason);
    expect([...r.query.questionBytes.subarray(0, 4)]).toEqual([3, 0x61, 0x2e, 0xff]);
    expect(r.query.question.name).toBe('a\\.\\255.test');
    expect(servfail(r.query).subarray(12, 12 + r.query.questionBytes.length)).toEqual(r.query.questionBytes);
  });

  test('malformed questions and records get FORMERR; nothing throws', () => {
    // A compression pointer in the question can only point into the header or loop.
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 0]), question([1, 0x61, 0xc0, 12])])))).toBe(1);
    // A label length with the reserved top bits.
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 0]), question([0x41, 0x61, 0])])))).toBe(1);
    // A name over 255 octets.
    const long = Array.from({ length: 5 }, () => [63, ...Buffer.alloc(63, 0x61)]).flat();
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 0]), question([...long, 0])])))).toBe(1);
    // An additional count with no record behind it, an OPT in the answer section, an OPT owned by a name.
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 1]), question(name)])))).toBe(1);
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 1, 0, 0]), question(name), optRecord()])))).toBe(1);
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 1]), question(name), optRecord(0, [1, 0x61, 0])])))).toBe(1);
    expect(rcodeOf(parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 2]), question(name), optRecord(), optRecord()])))).toBe(1);
    // EDNS version 1: BADVERS (16), with the DO bit echoed.
    const badvers = parseClientQuery(Buffer.concat([header(1, [1, 0, 0, 1]), question(name), optRecord(1)]));
    expect(rcodeOf(badvers)).toBe(16);
    if (!badvers.ok && badvers.reply) {
      const opt = dnsPacket.decode(badvers.reply).additionals?.[0];
      expect(opt && 'flags' in opt ? opt.flags & dnsPacket.DNSSEC_OK : 0).toBe(dnsPacket.DNSSEC_OK);
      expect(opt && 'ednsVersion' in opt ? opt.ednsVersion : -1).toBe(0);
    }
  });

  test('AXFR and IXFR: REFUSED on both transports, without RA', () => {
    const q = (type: number): Buffer => Buffer.concat([header(1, [1, 0, 0, 0]), question(name, type)]);
    expect(rcodeOf(parseClientQuery(q(252), 'udp'))).toBe(5);
    const r = parseClientQuery(q(252), 'udp');
    expect(!r.ok && r.reply ? r.reply.readUInt16BE(2) & 0x0080 : -1).toBe(0);
    expect(rcodeOf(parseClientQuery(q(252), 'tcp'))).toBe(5);
    expect(rcodeOf(parseClientQuery(q(251), 'udp'))).toBe(5);
    expect(rcodeOf(parseClientQuery(q(251), 'tcp'))).toBe(5);
    expect(parseClientQuery(q(255), 'udp').ok).toBe(true);
  });

  test('plausibleQuery agrees with the parser\'s header screen on 20,000 random headers', () => {
    let seed = 12345;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let i = 0; i < 20_000; i++) {
      const buf = Buffer.from(Array.from({ length: Math.floor(rand() * 30) }, () => Math.floor(rand() * 256)));
      // Bias towards the interesting values: QR/opcode clear, one question.
      if (buf.length > 5 && rand() < 0.5) {
        buf[2] = (buf[2] as number) & 0x07;
        buf[4] = 0;
        buf[5] = 1;
      }
      const r = parseClientQuery(buf);
      const screened = r.ok || !/shorter than a DNS header|is a response|opcode|questions, expected|no room for a question/.test(r.reason);
      expect(plausibleQuery(buf)).toBe(screened);
    }
  });
});

describe('answers too big for the client, with EDNS', () => {
  test('the additional section goes first and the OPT stays; TC only when the answers themselves do not fit', () => {
    const q = parsed(query('mx.test', { edns: 600, type: 'MX' }));
    const raw = dnsPacket.encode({
      type: 'response',
      id: 5,
      flags: dnsPacket.RECURSION_AVAILABLE,
      questions: [{ type: 'MX', name: 'mx.test' }],
      answers: [{ type: 'MX', name: 'mx.test', ttl: 60, data: { preference: 10, exchange: 'mail.test' } }],
      additionals: [
        ...Array.from({ length: 40 }, (_, i): Answer => ({ type: 'A', name: 'mail.test', ttl: 60, data: `198.51.100.${i + 1}` })),
        { type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] },
      ],
    });
    expect(raw.length).toBeGreaterThan(600);
    const { buf, truncated } = encodeClientAnswer(q, readUpstreamAnswer(raw, asked(q)), 600);
    expect(truncated).toBe(false);
    const out = dnsPacket.decode(buf);
    expect(out.flag_tc).toBe(false);
    expect(out.id).toBe(1234);
    expect(out.answers).toHaveLength(1);
    expect(out.additionals?.map((r) => r.type)).toEqual(['OPT']);
  });
});

/**
 * readUpstreamAnswer reads the OPT record in place (no dns-packet decode on
 * the hot path). Checked here against real answers from Debian's unbound
 * over TLS, with dns-packet's full decode of the same bytes as the
 * reference: extended rcode, flags, the keepalive timeout, where the OPT
 * and the additional section are, compression pointers in owner names; and
 * against broken answers made from real ones: every truncation, an option
 * running past its record, an option the client must still get (RFC 8914).
 */
import tls from 'node:tls';
import dnsPacket, { type OptAnswer } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { FrameReader } from './framing.js';
import { encodeClientAnswer } from './client-answer.js';
import { parseClientQuery, type ClientQuery } from './client-query.js';
import { readUpstreamAnswer } from './upstream-answer.js';
import { encodeUpstreamQuery, type UpstreamQuestion } from './upstream-query.js';

let unbound: UnboundServer;
let socket: tls.TLSSocket;
const reader = new FrameReader();
const waiting: ((m: Buffer) => void)[] = [];

beforeAll(async () => {
  unbound = await startUnbound({
    names: 4,
    keepaliveMs: 7000,
    minimalResponses: false,
    localData: ['mx.test. 300 IN MX 10 n1.test.', 'alias.test. 300 IN CNAME n2.test.'],
  });
  socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port: unbound.port, servername: unbound.pki.authName, ca: unbound.pki.caPem }, () => resolve(s));
    s.once('error', reject);
  });
  socket.on('data', (chunk: Buffer) => {
    for (const m of reader.push(chunk)) waiting.shift()?.(m);
  });
});

afterAll(async () => {
  socket?.destroy();
  await unbound?.stop();
});

interface Asked {
  readonly query: ClientQuery;
  readonly question: UpstreamQuestion;
  readonly raw: Buffer;
}

/** Asks unbound as the proxy does (padded, keepalive, the client's DO) and returns the answer's bytes. */
async function ask(name: string, type: 'A' | 'MX' | 'TXT' = 'A', dnssecOk = false): Promise<Asked> {
  const client = dnsPacket.encode({
    type: 'query',
    id: 4321,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: dnssecOk, options: [] }],
  });
  const parsed = parseClientQuery(client);
  if (!parsed.ok) throw new Error(parsed.reason);
  const { wire } = encodeUpstreamQuery(parsed.query, { pad: true, keepalive: true });
  wire.writeUInt16BE(0x5a5a, 2);
  const raw = await new Promise<Buffer>((resolve) => {
    waiting.push(resolve);
    socket.write(wire);
  });
  return { query: parsed.query, question: { key: parsed.query.question, bytes: parsed.query.questionBytes }, raw };
}

function referenceOpt(raw: Buffer): OptAnswer | undefined {
  return dnsPacket.decode(raw).additionals?.find((r): r is OptAnswer => r.type === 'OPT');
}

describe('readUpstreamAnswer against unbound', () => {
  test('reads what dns-packet decodes from real answers: rcode, OPT flags, keepalive, record positions', async () => {
    const cases = [await ask('n1.test'), await ask('mx.test', 'MX'), await ask('alias.test'), await ask('nothing.test'), await ask('n2.test', 'A', true), await ask('big.test', 'TXT')];
    for (const { question, raw } of cases) {
      const a = readUpstreamAnswer(raw, question);
      const ref = dnsPacket.decode(raw);
      const opt = referenceOpt(raw);
      expect(opt, 'unbound answers an EDNS query with an OPT').toBeDefined();
      if (!opt) continue;
      expect(a.id).toBe(0x5a5a);
      expect(a.rcode).toBe((opt.extendedRcode << 4) | (raw.readUInt16BE(2) & 0xf));
      expect(a.opt?.flags).toBe(opt.flags);
      expect(a.opt?.extendedRcode).toBe(opt.extendedRcode);
      const codes = opt.options.map((o) => o.code);
      expect(codes).toContain(11); // it answers our keepalive
      expect(a.opt?.endToEndOptions).toBe(codes.some((c) => c !== 11 && c !== 12));
      const ka = opt.options.find((o) => o.code === 11) as { timeout?: number } | undefined;
      expect(a.keepaliveMs).toBe(ka?.timeout === undefined ? undefined : ka.timeout * 100);
      expect(a.keepaliveMs).toBe(7000);
      // The OPT's byte range: one record, decoded there, ending the message as resolvers write it.
      expect(dnsPacket.answer.decode(raw, a.optStart).type).toBe('OPT');
      expect(a.optStart + dnsPacket.answer.decode.bytes).toBe(a.optEnd);
      expect(a.optEnd).toBe(raw.length);
      // The additional section starts with its first record.
      const firstAdditional = ref.additionals?.[0];
      expect(dnsPacket.answer.decode(raw, a.additionalStart).type).toBe(firstAdditional?.type);
    }
    const nx = cases[3] as Asked;
    expect(readUpstreamAnswer(nx.raw, nx.question).rcode).toBe(3);
    const signed = cases[4] as Asked;
    expect((readUpstreamAnswer(signed.raw, signed.question).opt?.flags ?? 0) & dnsPacket.DNSSEC_OK).toBe(dnsPacket.DNSSEC_OK);
  });

  test('owner names that are compression pointers are walked (MX with additional records, a CNAME chain)', async () => {
    for (const { question, raw, query } of [await ask('mx.test', 'MX'), await ask('alias.test')]) {
      const a = readUpstreamAnswer(raw, question);
      // The first answer's owner points back at the question's name (0xc00c).
      expect(raw.readUInt16BE(12 + question.bytes.length)).toBe(0xc00c);
      const ref = dnsPacket.decode(raw);
      const out = dnsPacket.decode(encodeClientAnswer(query, a, 65535).buf);
      expect(out.id).toBe(4321);
      expect(out.answers).toEqual(ref.answers);
      expect(out.additionals?.filter((r) => r.type !== 'OPT')).toEqual(ref.additionals?.filter((r) => r.type !== 'OPT'));
      const opt = out.additionals?.find((r): r is OptAnswer => r.type === 'OPT');
      expect(opt?.options).toEqual([]); // padding and keepalive were the TLS hop's
    }
  });

  test('every truncation of a real answer is refused, never read as an answer', async () => {
    for (const { question, raw } of [await ask('mx.test', 'MX'), await ask('big.test', 'TXT'), await ask('nothing.test')]) {
      for (let length = 0; length < raw.length; length++) {
        expect(() => readUpstreamAnswer(raw.subarray(0, length), question), `cut at ${length} of ${raw.length}`).toThrow(
          expect.objectContaining({ code: expect.stringMatching(/^DOTSTUB_(MALFORMED|QUESTION_MISMATCH)$/) }),
        );
      }
    }
  });

  test('an EDNS option that runs past its record makes the answer malformed', async () => {
    const { question, raw } = await ask('n1.test');
    const a = readUpstreamAnswer(raw, question);
    // The OPT's first option's length, one more than its record holds.
    const firstOption = a.optStart + 11;
    const broken = Buffer.from(raw);
    broken.writeUInt16BE(raw.readUInt16BE(firstOption + 2) + (raw.length - firstOption), firstOption + 2);
    expect(() => readUpstreamAnswer(broken, question)).toThrow(expect.objectContaining({ code: 'DOTSTUB_MALFORMED' }));
  });

  test('an option the client must get (extended DNS error, RFC 8914) is kept; the hop’s own are removed', async () => {
    const { question, raw, query } = await ask('n1.test');
    const a = readUpstreamAnswer(raw, question);
    // Append EDE "Other Error" (code 15: INFO-CODE 0, EXTRA-TEXT "x") to unbound's own OPT.
    const ede = Buffer.from([0, 15, 0, 3, 0, 0, 0x78]);
    const withEde = Buffer.concat([raw, ede]);
    withEde.writeUInt16BE(raw.readUInt16BE(a.optStart + 9) + ede.length, a.optStart + 9);
    const b = readUpstreamAnswer(withEde, question);
    expect(b.opt?.endToEndOptions).toBe(true);
    expect(b.keepaliveMs).toBe(7000);
    const out = dnsPacket.decode(encodeClientAnswer(query, b, 65535).buf);
    const opt = out.additionals?.find((r): r is OptAnswer => r.type === 'OPT');
    expect(opt?.options.map((o) => o.code)).toEqual([15]);
  });
});

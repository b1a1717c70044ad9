import dnsPacket from 'dns-packet';
import { describe, expect, test } from 'vitest';
import { ttlLayout } from './ttl.js';

describe('the TTL walker', () => {
  test('finds every TTL, skips OPT, and gives the smallest', () => {
    const raw = dnsPacket.encode({
      type: 'response',
      id: 1,
      questions: [{ type: 'A', name: 'www.example.test' }],
      answers: [
        { type: 'CNAME', name: 'www.example.test', ttl: 300, data: 'edge.example.test' },
        { type: 'A', name: 'edge.example.test', ttl: 60, data: '192.0.2.7' },
      ],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0x8000, flag_do: true, options: [] }],
    });
    const t = ttlLayout(raw);
    expect(t.offsets).toHaveLength(2);
    expect(t.offsets.map((o) => raw.readUInt32BE(o))).toEqual([300, 60]);
    expect(t.minTtl).toBe(60);
    expect(t.negativeTtl).toBeUndefined();
    expect(t.answerCount).toBe(2);
  });

  test('a negative answer takes min(SOA TTL, SOA MINIMUM) (RFC 2308 §5)', () => {
    const soa = (ttl: number, minimum: number): Buffer =>
      dnsPacket.encode({
        type: 'response',
        id: 1,
        flags: 3,
        questions: [{ type: 'A', name: 'nothing.example.test' }],
        authorities: [{ type: 'SOA', name: 'example.test', ttl, data: { mname: 'ns.example.test', rname: 'host.example.test', serial: 1, refresh: 2, retry: 3, expire: 4, minimum } }],
      });
    expect(ttlLayout(soa(3600, 300)).negativeTtl).toBe(300);
    expect(ttlLayout(soa(120, 900)).negativeTtl).toBe(120);
  });

  test('a message that runs short is an error, not a wrong layout', () => {
    const raw = dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'A', name: 'a.test' }], answers: [{ type: 'A', name: 'a.test', ttl: 5, data: '192.0.2.1' }] });
    expect(() => ttlLayout(raw.subarray(0, raw.length - 2))).toThrow(RangeError);
  });
});

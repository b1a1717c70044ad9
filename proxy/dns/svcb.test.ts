import { describe, expect, test } from 'vitest';
import { parseSvcb, SvcbFormatError } from './svcb.js';

/** RDATA from parts: priority, target labels, then [key, value bytes] in the order given. */
function rdata(priority: number, target: string, params: readonly [number, Buffer][]): Buffer {
  const name = Buffer.concat([...(target ? target.split('.') : []).map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const p = params.map(([k, v]) => {
    const h = Buffer.alloc(4);
    h.writeUInt16BE(k, 0);
    h.writeUInt16BE(v.length, 2);
    return Buffer.concat([h, v]);
  });
  const head = Buffer.alloc(2);
  head.writeUInt16BE(priority, 0);
  return Buffer.concat([head, name, ...p]);
}
const alpn = (...ids: string[]): Buffer => Buffer.concat(ids.map((id) => Buffer.concat([Buffer.from([id.length]), Buffer.from(id)])));
const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);

describe('SVCB RDATA (RFC 9460)', () => {
  test('a DoT designation: alpn, port, both hints', () => {
    const v6 = Buffer.from('fd530001000000000000000000000001', 'hex');
    const r = parseSvcb(rdata(1, 'dns.lab.test', [[1, alpn('dot')], [3, u16(853)], [4, Buffer.from([10, 53, 1, 1, 10, 53, 1, 9])], [6, v6]]));
    expect(r).toEqual({ priority: 1, target: 'dns.lab.test', alpn: ['dot'], port: 853, ipv4hint: ['10.53.1.1', '10.53.1.9'], ipv6hint: ['fd53:1::1'] });
  });

  test('a DoH designation with its dohpath (RFC 9461), target in upper case read lower', () => {
    const r = parseSvcb(rdata(2, 'DNS.Lab.TEST', [[1, alpn('h2', 'h3')], [7, Buffer.from('/dns-query{?dns}')]]));
    expect(r).toMatchObject({ priority: 2, target: 'dns.lab.test', alpn: ['h2', 'h3'], dohpath: '/dns-query{?dns}' });
    expect(r.port).toBeUndefined();
  });

  test('an alias-form record and unknown keys are read (the caller skips priority 0); unknown keys are skipped', () => {
    expect(parseSvcb(rdata(0, 'other.test', []))).toMatchObject({ priority: 0, target: 'other.test' });
    expect(parseSvcb(rdata(1, '', [[1, alpn('dot')], [65000, Buffer.from('x')]]))).toMatchObject({ target: '', alpn: ['dot'] });
  });

  test.each([
    ['keys out of order', rdata(1, 'a.test', [[3, u16(853)], [1, alpn('dot')]])],
    ['a key twice', rdata(1, 'a.test', [[1, alpn('dot')], [1, alpn('h2')]])],
    ['a value past the end', Buffer.concat([rdata(1, 'a.test', []), Buffer.from([0, 3, 0, 9, 3])])],
    ['a port of 3 octets', rdata(1, 'a.test', [[3, Buffer.from([0, 3, 85])]])],
    ['an ipv4hint of 5 octets', rdata(1, 'a.test', [[4, Buffer.from([1, 2, 3, 4, 5])]])],
    ['an empty alpn entry', rdata(1, 'a.test', [[1, Buffer.from([0])]])],
    ['a compressed target', Buffer.from([0, 1, 0xc0, 12])],
    ['a target past the end', Buffer.from([0, 1, 5, 0x61])],
    ['a mandatory key it does not know', rdata(1, 'a.test', [[0, u16(9)], [1, alpn('dot')], [9, Buffer.from('x')]])],
    ['a dohpath that is not a path', rdata(1, 'a.test', [[7, Buffer.from('dns-query')]])],
  ])('refused whole: %s', (_what, bytes) => {
    expect(() => parseSvcb(bytes)).toThrow(SvcbFormatError);
  });
});

import { describe, expect, test } from 'vitest';
import { presentName } from './name.js';

/** A name as wire labels (uncompressed), with `before` octets in front of it and `after` behind. */
function wire(labels: readonly (string | Buffer)[], before = 0, after = 0): Buffer {
  const parts: Buffer[] = [Buffer.alloc(before, 0xaa)];
  for (const l of labels) {
    const b = typeof l === 'string' ? Buffer.from(l, 'latin1') : l;
    parts.push(Buffer.from([b.length]), b);
  }
  parts.push(Buffer.from([0]), Buffer.alloc(after, 0xbb));
  return Buffer.concat(parts);
}

describe('presentName', () => {
  test('a plain name reads as its labels joined by dots, wherever it sits in the message', () => {
    expect(presentName(wire(['www', 'Example', 'com']), 0)).toBe('www.Example.com');
    expect(presentName(wire(['a-b_c', '123'], 12, 4), 12)).toBe('a-b_c.123');
    expect(presentName(wire([]), 0)).toBe('.');
  });

  test('a name of 63-octet labels up to 255 octets reads whole', () => {
    const label = 'x'.repeat(63);
    const labels = [label, label, label, 'y'.repeat(61)];
    expect(wire(labels).length).toBe(255);
    expect(presentName(wire(labels), 0)).toBe(labels.join('.'));
  });

  test('octets presentation must escape are escaped (RFC 1035 §5.1), in that label and no other', () => {
    expect(presentName(wire(['a.b', 'c']), 0)).toBe('a\\.b.c');
    expect(presentName(wire(['back\\slash']), 0)).toBe('back\\\\slash');
    expect(presentName(wire([Buffer.from([0x41, 0x20, 0x00, 0xff]), 'ok']), 0)).toBe('A\\032\\000\\255.ok');
  });

  test('a plain name read after an escaped one is not mixed with it (the layout buffer is shared)', () => {
    expect(presentName(wire(['long-label-here', 'example']), 0)).toBe('long-label-here.example');
    expect(presentName(wire(['a.b']), 0)).toBe('a\\.b');
    expect(presentName(wire(['x', 'y']), 0)).toBe('x.y');
  });

  test('a name cut short by the end of the message reads as far as it goes, never past it', () => {
    const cut = wire(['www', 'example', 'com']).subarray(0, 9); // 3www7exa
    expect(presentName(cut, 0)).toBe('www');
  });
});

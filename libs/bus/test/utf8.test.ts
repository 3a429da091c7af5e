import { describe, expect, it } from 'vitest';
import { utf8 } from '../src/utf8.ts';

describe('utf8', () => {
  it('gives the bytes TextEncoder gives, for any string', () => {
    const encoder = new TextEncoder();
    const samples = [
      '',
      'PUB a.b 12\r\n',
      '{"q":"héllo wörld","e":"😀"}',
      'x'.repeat(10_000),
      'lone \ud800 surrogate',
      '\udfff',
    ];
    for (const text of samples) {
      expect(Array.from(utf8(text))).toEqual(Array.from(encoder.encode(text)));
    }
  });

  it('returns bytes no later call changes', () => {
    const first = utf8('first message');
    const copy = Array.from(first);
    for (let i = 0; i < 1_000; i += 1) utf8(`another ${i}`);
    expect(Array.from(first)).toEqual(copy);
  });
});

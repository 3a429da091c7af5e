import { describe, expect, it } from 'vitest';
import { CONTROL_PAYLOAD_LIMITS, checkPayloadBounds } from '../src/index.ts';

const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? {} : { n: nested(levels - 1) });
const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
const items = (count: number) => ({ list: Array.from({ length: count }, (_, i) => i) });
const text = (count: number, char = 'x') => ({ s: char.repeat(count) });

/** A payload whose UTF-8 JSON is exactly `bytes` long, within every other bound. */
function sized(bytes: number): Record<string, string> {
  const parts = 4;
  const overhead = JSON.stringify({ a: '', b: '', c: '', d: '' }).length;
  const total = bytes - overhead;
  const each = Math.floor(total / parts);
  const first = total - each * (parts - 1);
  return { a: 'x'.repeat(first), b: 'x'.repeat(each), c: 'x'.repeat(each), d: 'x'.repeat(each) };
}

describe('checkPayloadBounds', () => {
  const L = CONTROL_PAYLOAD_LIMITS;
  const table: ReadonlyArray<readonly [keyof typeof L, string, unknown, unknown]> = [
    ['maxDepth', 'nesting depth', nested(L.maxDepth), nested(L.maxDepth + 1)],
    ['maxKeys', 'keys', keys(L.maxKeys), keys(L.maxKeys + 1)],
    ['maxListItems', 'list items', items(L.maxListItems), items(L.maxListItems + 1)],
    ['maxStringChars', 'characters per string', text(L.maxStringChars), text(L.maxStringChars + 1)],
    ['maxTotalBytes', 'total size', sized(L.maxTotalBytes), sized(L.maxTotalBytes + 1)],
  ];

  it.each(table)('%s (%s): at the limit passes, one over fails', (bound, _label, atLimit, over) => {
    expect(checkPayloadBounds(atLimit)).toBeUndefined();
    expect(checkPayloadBounds(over)?.bound).toBe(bound);
  });

  it('has the values of the Limits section', () => {
    expect(L).toEqual({ maxDepth: 6, maxKeys: 64, maxListItems: 50, maxStringChars: 4096, maxTotalBytes: 16 * 1024 });
  });

  it('counts the payload object itself as depth 1', () => {
    expect(checkPayloadBounds({})).toBeUndefined();
    expect(checkPayloadBounds(nested(7))?.bound).toBe('maxDepth');
  });

  it('reports the depth of a payload nested far deeper than the stack could serialise', () => {
    let deepObject: unknown = {};
    let deepList: unknown = [];
    for (let i = 0; i < 100_000; i++) {
      deepObject = { n: deepObject };
      deepList = [deepList];
    }
    expect(() => JSON.stringify(deepObject)).toThrow(RangeError);
    expect(checkPayloadBounds(deepObject)?.bound).toBe('maxDepth');
    expect(checkPayloadBounds({ a: deepList })?.bound).toBe('maxDepth');
  });

  it('counts keys across every nested object', () => {
    const spread = { a: keys(32), b: keys(31) }; // 2 + 32 + 31 = 65
    expect(checkPayloadBounds(spread)?.bound).toBe('maxKeys');
  });

  it('counts characters, not UTF-16 units', () => {
    // 4000 emoji are 8000 UTF-16 units but 4000 characters (and 16,008 bytes of JSON).
    expect(checkPayloadBounds({ s: '😀'.repeat(4000) })).toBeUndefined();
    expect(checkPayloadBounds({ s: `${'x'.repeat(L.maxStringChars)}😀` })?.bound).toBe('maxStringChars');
  });

  it('checks keys against the string bound', () => {
    expect(checkPayloadBounds({ ['k'.repeat(L.maxStringChars + 1)]: 1 })?.bound).toBe('maxStringChars');
  });

  it('measures the total size in UTF-8 bytes', () => {
    expect(checkPayloadBounds({ s: 'é'.repeat(4000), t: 'é'.repeat(4000), u: 'é'.repeat(500) })?.bound).toBe(
      'maxTotalBytes',
    );
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash } from '../src/index.ts';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('drops undefined members as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });
});

describe('contentHash', () => {
  it('is sha256 of the canonical JSON, prefixed sha256:', () => {
    const hex = createHash('sha256').update('{"a":1,"b":2}').digest('hex');
    expect(contentHash({ b: 2, a: 1 })).toBe(`sha256:${hex}`);
  });

  it('is the same for configurations that differ only in key order, at any depth', () => {
    expect(contentHash({ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } })).toBe(
      contentHash({ a: { c: [3, { e: 0, f: 1 }], d: 2 }, b: 1 }),
    );
    expect(contentHash({ llm_params: { model: 'm', temperature: 0 } })).toBe(
      contentHash({ llm_params: { temperature: 0, model: 'm' } }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  clashingKeys,
  documentKeys,
  encodeKey,
  encodePrefix,
  idBytes,
  indexIdentity,
  prefixEnd,
  reportedKey,
} from '../src/index-keys.ts';
import { nedbModel } from '../src/nedb.ts';
import { overlaps } from '../src/sqlite-indexes.ts';

const SCALARS: unknown[] = [
  undefined,
  null,
  -Number.MAX_VALUE,
  -1.5,
  -1,
  -0,
  0,
  Number.MIN_VALUE,
  0.5,
  1,
  2 ** 53,
  Number.MAX_VALUE,
  '',
  '\u0000',
  'A',
  'a',
  'a\u0000',
  'ab',
  'é',
  '\ud83d\ude00',
  '\ue000',
  '\uffff',
  false,
  true,
  new Date(0),
  new Date(1e12),
];

const sign = (n: number) => Math.sign(n) || 0;
const keys = (document: object, fields: string[], sparse = false) => documentKeys(document, { fields, sparse });

describe('index keys', () => {
  it('orders encoded keys of scalars exactly as compareThings orders the values', () => {
    for (const a of SCALARS) {
      for (const b of SCALARS) {
        const encoded = Buffer.compare(encodeKey([a]), encodeKey([b]));
        expect(sign(encoded), `${String(a)} vs ${String(b)}`).toBe(sign(nedbModel.compareThings(a, b)));
      }
    }
  });

  it('orders _id bytes as JavaScript orders strings, past U+FFFF too', () => {
    const ids = ['', 'a', 'ab', 'b', '\ue000', '\ud83d\ude00', '\uffff'];
    for (const a of ids) {
      for (const b of ids) expect(sign(Buffer.compare(idBytes(a), idBytes(b)))).toBe(sign(a < b ? -1 : a > b ? 1 : 0));
    }
  });

  it('keys a number JSON cannot hold as null, as it is stored', () => {
    expect(encodeKey([Number.NaN])).toEqual(encodeKey([null]));
    expect(encodeKey([Number.POSITIVE_INFINITY])).toEqual(encodeKey([null]));
  });

  it('gives an array one key per distinct element, nested arrays flattened, and marks it unordered', () => {
    const found = keys({ tags: ['a', ['b', 'a'], 1] }, ['tags']);
    expect(found.keys).toEqual([encodeKey(['a']), encodeKey(['b']), encodeKey([1])]);
    expect(found.unordered).toBe(true);
    expect(keys({ tags: 'a' }, ['tags']).unordered).toBe(false);
  });

  it('keys an empty array as a value of its own', () => {
    expect(keys({ tags: [] }, ['tags']).keys).toEqual([encodeKey([[]])]);
  });

  it('reaches through arrays of objects on a dotted path, a missing member counting as missing', () => {
    const found = keys({ steps: [{ kind: 'x' }, {}] }, ['steps.kind']);
    expect(found.values).toEqual([['x'], [undefined]]);
  });

  it('keys objects by content, whatever their key order', () => {
    expect(keys({ m: { a: 1, b: 2 } }, ['m']).keys).toEqual(keys({ m: { b: 2, a: 1 } }, ['m']).keys);
    expect(keys({ m: { a: 1 } }, ['m']).keys).not.toEqual(keys({ m: { b: 1 } }, ['m']).keys);
  });

  it('keys a missing field apart from null, but makes a unique index find them clashing', () => {
    expect(keys({}, ['email']).keys).toEqual([encodeKey([undefined])]);
    expect(encodeKey([undefined])).not.toEqual(encodeKey([null]));
    expect(clashingKeys([undefined])).toEqual([encodeKey([undefined]), encodeKey([null])]);
    expect(clashingKeys(['t', null])).toEqual([encodeKey(['t', undefined]), encodeKey(['t', null])]);
  });

  it('leaves a document without the field out of a sparse index, but not one holding null', () => {
    expect(keys({}, ['email'], true).keys).toEqual([]);
    expect(keys({ email: null }, ['email'], true).keys).toEqual([encodeKey([null])]);
  });

  it('gives a compound index every combination, each leading component delimited', () => {
    const found = keys({ tenant: 't', tags: ['a', 'b'] }, ['tenant', 'tags']);
    expect(found.values).toEqual([
      ['t', 'a'],
      ['t', 'b'],
    ]);
    const prefix = encodePrefix(['t']);
    for (const key of found.keys) expect(key.subarray(0, prefix.length)).toEqual(prefix);
    const longer = encodeKey(['tt', 'a']);
    expect(longer.subarray(0, prefix.length)).not.toEqual(prefix);
    expect(Buffer.compare(encodeKey(['t', 'zzz']), prefixEnd(prefix))).toBe(-1);
  });

  it('names an index by its sorted fields and reports a duplicate key as the nedb engine does', () => {
    expect(indexIdentity(['tenant', 'key'])).toBe('key,tenant');
    expect(reportedKey(['email'], [undefined])).toBeNull();
    expect(reportedKey(['tenant', 'key'], ['t', 'k'])).toEqual({ tenant: 't', key: 'k' });
  });
});

describe('overlaps', () => {
  it('is true for the same path and for a path inside the other, on whole segments only', () => {
    expect(overlaps('a', 'a')).toBe(true);
    expect(overlaps('a.b', 'a')).toBe(true);
    expect(overlaps('a', 'a.b.c')).toBe(true);
    expect(overlaps('team.name', 'team')).toBe(true);
    expect(overlaps('ab', 'a')).toBe(false);
    expect(overlaps('a', 'ab.c')).toBe(false);
    expect(overlaps('a.b', 'a.c')).toBe(false);
    expect(overlaps('status', 'updated_at')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { applyModifiers } from '../src/modify.ts';
import { nedbModel } from '../src/nedb.ts';
import { upsertSeed } from '../src/nedb-query.ts';
import type { NedbDocument, NedbQuery } from '../src/nedb.ts';
import { checkUpdate } from '../src/validate.ts';
import { upsertDocument } from '../src/write-outcome.ts';

/**
 * `applyModifiers` must be nedb's `modify` for every update `checkUpdate`
 * lets through: the same document, or the same error. Each case runs both
 * on copies of the same input and compares.
 */

type Outcome = { readonly doc: unknown } | { readonly error: string };

function outcome(run: () => NedbDocument): Outcome {
  try {
    return { doc: run() };
  } catch (error) {
    return { error: error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error) };
  }
}

/**
 * Both implementations on copies of `document` and `update`; the stored
 * document is never changed, neither by the apply nor by a later change of
 * its result (`shared`: the result shares what the update left alone).
 */
function compare(document: Record<string, unknown>, update: Record<string, unknown>, shared: boolean) {
  const modifiers = checkUpdate(update) as NedbQuery;
  const mine = structuredClone(document) as NedbDocument;
  const frozen = JSON.stringify(mine);
  const ours = outcome(() => applyModifiers(mine, structuredClone(modifiers), { shared }));
  const nedbs = outcome(() => nedbModel.modify(structuredClone(document), structuredClone(modifiers)));
  expect(JSON.stringify(mine)).toBe(frozen);
  return { ours, nedbs };
}

const MODES = [
  ['a deep copy', false],
  ['shared', true],
] as const;

const base = (): Record<string, unknown> => ({
  _id: 'd1',
  n: 1,
  s: 'text',
  nil: null,
  list: [1, { a: 2 }],
  nested: { x: 1, deeper: { y: [1] } },
  when: '2026-11-25T00:00:00.000Z',
});

const CASES: readonly [string, Record<string, unknown>][] = [
  ['$set a new top-level field', { $set: { fresh: { a: [1, 2] } } }],
  ['$set over an existing field of another type', { $set: { n: 'now a string' } }],
  ['$set a path through missing objects', { $set: { 'a.b.c': 3 } }],
  ['$set a path through an existing object', { $set: { 'nested.deeper.z': true } }],
  ['$set a path through an array (index)', { $set: { 'list.1.a': 5 } }],
  ['$set a path through an array (name)', { $set: { 'list.x': 5 } }],
  ['$set a path through null', { $set: { 'nil.x': 1 } }],
  ['$set a path through a number', { $set: { 'n.x': 1 } }],
  ['$set a path through a string', { $set: { 's.x': 1 } }],
  ['$set a path through __proto__', { $set: { '__proto__.x': 1 } }],
  ['$set a path through an inherited member', { $set: { 'toString.x': 1 } }],
  ['$unset an existing field', { $unset: { n: '' } }],
  ['$unset a missing field', { $unset: { missing: '' } }],
  ['$unset a path through missing objects', { $unset: { 'a.b.c': '' } }],
  ['$unset a nested field', { $unset: { 'nested.deeper.y': '' } }],
  ['$unset a path through a number', { $unset: { 'n.x': '' } }],
  ['$inc an existing number', { $inc: { n: 2.5 } }],
  ['$inc a missing field', { $inc: { counter: 1 } }],
  ['$inc a nested missing field', { $inc: { 'stats.calls': 1 } }],
  ['$inc a string', { $inc: { s: 1 } }],
  ['$inc null', { $inc: { nil: 1 } }],
  ['$push onto an array', { $push: { list: { b: 3 } } }],
  ['$push onto a missing field', { $push: { fresh: 1 } }],
  ['$push an array as one element', { $push: { list: [7, 8] } }],
  ['$push $each', { $push: { list: { $each: [3, 4] } } }],
  ['$push $each of nothing', { $push: { list: { $each: [] } } }],
  ['$push onto a nested array', { $push: { 'nested.deeper.y': 2 } }],
  ['$push onto a number', { $push: { n: 1 } }],
  ['$push onto null', { $push: { nil: 1 } }],
  [
    'several operators and fields',
    { $set: { s: 'x', 'nested.x': 2 }, $inc: { n: -1 }, $push: { list: 0 }, $unset: { when: '' } },
  ],
];

describe.each(MODES)('applyModifiers against nedb modify, %s', (_mode, shared) => {
  it.each(CASES)('%s', (_name, update) => {
    const { ours, nedbs } = compare(base(), update, shared);
    expect(ours).toEqual(nedbs);
  });

  it('agrees on random documents and updates', () => {
    let seed = 20261125;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <V>(values: readonly V[]): V => values[Math.floor(random() * values.length)] as V;
    const names = ['a', 'b', 'c', 'list'];
    const value = (depth: number): unknown => {
      const kind = pick(['number', 'string', 'null', 'bool', 'array', 'object']);
      if (kind === 'number') return Math.round(random() * 100) - 50;
      if (kind === 'string') return pick(['', 'x', 'yz']);
      if (kind === 'null') return null;
      if (kind === 'bool') return random() < 0.5;
      if (depth > 2) return 0;
      if (kind === 'array') return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(names.filter(() => random() < 0.5).map((name) => [name, value(depth + 1)]));
    };
    const path = (): string =>
      Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick([...names, '0', '1'])).join('.');
    let compared = 0;
    for (let i = 0; i < 3_000; i += 1) {
      const document = { _id: `d${i}`, ...(value(0) as object) };
      const update: Record<string, Record<string, unknown>> = {};
      for (let j = 0; j < 1 + Math.floor(random() * 3); j += 1) {
        const operator = pick(['$set', '$unset', '$inc', '$push']);
        const operand =
          operator === '$inc'
            ? Math.round(random() * 10)
            : operator === '$unset'
              ? ''
              : operator === '$push' && random() < 0.3
                ? { $each: [value(2), value(2)] }
                : value(1);
        update[operator] = { ...update[operator], [path()]: operand };
      }
      try {
        checkUpdate(update);
      } catch {
        continue; // conflicting paths: refused before any engine sees the update
      }
      const { ours, nedbs } = compare(document, update, shared);
      expect({ i, update, document, ours }).toEqual({ i, update, document, ours: nedbs });
      compared += 1;
    }
    expect(compared).toBeGreaterThan(1_500);
  });
});

describe('applyModifiers, shared', () => {
  interface Shape {
    readonly steps: { index: number }[];
    readonly config: object;
    readonly stats: { calls: number; nested: object };
  }
  it('copies only what the update writes: the document is left as it was, its other parts shared', () => {
    const document = {
      _id: 't1',
      steps: [{ index: 0 }],
      config: { tools: [{ name: 'echo' }] },
      stats: { calls: 1, nested: { a: 1 } },
    } as NedbDocument;
    const frozen = JSON.stringify(document);
    const after = applyModifiers(
      document,
      { $push: { steps: { index: 1 } }, $inc: { 'stats.calls': 1 }, $set: { 'stats.nested.b': 2 } },
      { shared: true },
    ) as unknown as Shape;
    expect(JSON.stringify(document)).toBe(frozen);
    expect(after.steps).toEqual([{ index: 0 }, { index: 1 }]);
    expect(after.stats).toEqual({ calls: 2, nested: { a: 1, b: 2 } });
    // What the update did not reach is the same object; what it wrote through was copied once.
    const before = document as unknown as Shape;
    expect(after.config).toBe(before.config);
    expect(after.steps).not.toBe(before.steps);
    expect(after.stats).not.toBe(before.stats);
    expect(after.stats.nested).not.toBe(before.stats.nested);
    expect(after.steps[0]).toBe(before.steps[0]);
  });

  it('leaves the document unchanged when it hands a case to nedb midway', () => {
    const document = { _id: 'd', a: { b: 1 }, list: [1] } as NedbDocument;
    const frozen = JSON.stringify(document);
    // `$set` of a.c is plain; `$inc` on the array is not: nedb's modify decides, on the untouched document.
    const result = outcome(() => applyModifiers(document, { $set: { 'a.c': 2 }, $inc: { list: 1 } }, { shared: true }));
    expect(JSON.stringify(document)).toBe(frozen);
    expect(result).toEqual(
      outcome(() => nedbModel.modify(structuredClone(document), { $set: { 'a.c': 2 }, $inc: { list: 1 } })),
    );
  });
});

describe('upsertDocument against nedb modify', () => {
  /** The document as upsertDocument built it before it applied the modifiers itself: nedb's modify on the seed. */
  function nedbUpsert(filter: Record<string, unknown>, operators: Record<string, Record<string, unknown>>) {
    const { _id: seedId, ...seed } = upsertSeed(filter as NedbQuery);
    const { $setOnInsert: onInsert = {}, $set: set = {}, ...others } = operators;
    const { _id: onInsertId, ...onInsertFields } = onInsert;
    const id = typeof seedId === 'string' ? seedId : typeof onInsertId === 'string' ? onInsertId : 'random';
    return nedbModel.modify(nedbModel.deepCopy({ _id: id, ...seed }, true), {
      ...others,
      $set: { ...onInsertFields, ...set },
    });
  }

  const UPSERTS: readonly [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['filter equalities and $set', { tenant: 't', kind: 'k' }, { $set: { n: 1 } }],
    [
      '$setOnInsert beside $inc and $push',
      { _id: 'x' },
      { $setOnInsert: { created: 'now' }, $inc: { n: 2 }, $push: { l: 1 } },
    ],
    ['$setOnInsert naming the _id', { tenant: 't' }, { $setOnInsert: { _id: 'chosen', a: 1 }, $set: { b: 2 } }],
    ['a dotted filter equality', { 'a.b': 1, c: { d: 2 } }, { $set: { 'a.e': 3 } }],
    ['operator conditions left out of the seed', { n: { $gt: 1 }, s: 'x' }, { $set: { t: 1 } }],
    ['$inc on a string the filter fixed', { _id: 'x', s: 'text' }, { $inc: { s: 1 } }],
    ['$push onto a number the filter fixed', { _id: 'x', n: 1 }, { $push: { n: 1 } }],
    ['$set through a scalar the filter fixed', { _id: 'x', n: 1 }, { $set: { 'n.m': 1 } }],
    ['$unset of a seeded field', { _id: 'x', gone: 1 }, { $unset: { gone: '' }, $set: { kept: 1 } }],
  ];

  it.each(UPSERTS)('%s', (_name, filter, update) => {
    const operators = checkUpdate(update);
    const ours = outcome(() => {
      const built = upsertDocument(structuredClone(filter) as NedbQuery, structuredClone(operators));
      return built._id === undefined || built._id === 'chosen' || built._id === 'x'
        ? built
        : { ...built, _id: 'random' };
    });
    const nedbs = outcome(() => nedbUpsert(structuredClone(filter), structuredClone(operators)));
    expect(ours).toEqual(nedbs);
  });
});

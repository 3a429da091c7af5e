import { describe, expect, it } from 'vitest';
import { encodeKey, encodePrefix, keyAfter, prefixEnd } from '../src/index-keys.ts';
import type { IndexDefinition } from '../src/index-keys.ts';
import { chooseWalk, filterConditions, planFilter, planWalk } from '../src/query-plan.ts';
import type { Plan } from '../src/query-plan.ts';

let nextIx = 0;
function index(fields: string[], options: Partial<IndexDefinition> = {}): IndexDefinition {
  nextIx += 1;
  return {
    ix: nextIx,
    name: [...fields].sort().join(','),
    fields,
    unique: false,
    sparse: false,
    unordered: false,
    ...options,
  };
}

const plan = (filter: Record<string, unknown>, indexes: IndexDefinition[]) =>
  planFilter(filterConditions(filter), indexes);
const exact = (values: unknown[]) => ({ low: encodeKey(values), high: keyAfter(encodeKey(values)) });
const indexName = (chosen: Plan) => (chosen.kind === 'index' ? chosen.index.name : chosen.kind);

describe('query planning', () => {
  const status = index(['status']);
  const tenantKey = index(['tenant', 'key'], { unique: true });
  const tenantStatusAt = index(['tenant', 'status', 'at']);

  it('reads `_id` equality and $in through the primary key, before any index', () => {
    expect(plan({ _id: 'a', status: 'x' }, [status])).toEqual({ kind: 'ids', ids: ['a'] });
    expect(plan({ _id: { $in: ['a', null, 2, 'b'] } }, [])).toEqual({ kind: 'ids', ids: ['a', 'b'] });
    expect(plan({ _id: { $gt: 1 } }, [])).toEqual({ kind: 'ids', ids: [] });
  });

  it('prefers a unique index given in full, then the index settling the most fields', () => {
    const filter = { tenant: 't', key: 'k', status: 'x', at: 1 };
    expect(indexName(plan(filter, [status, tenantStatusAt, tenantKey]))).toBe('key,tenant');
    expect(indexName(plan({ tenant: 't', status: 'x' }, [status, tenantStatusAt]))).toBe('at,status,tenant');
  });

  it('looks up every combination of equalities and $in on a compound index', () => {
    expect(plan({ tenant: 't', key: { $in: ['a', 'b'] } }, [tenantKey])).toMatchObject({
      ranges: [exact(['t', 'a']), exact(['t', 'b'])],
    });
  });

  it('reads a prefix of a compound index, and a range on its last field after equalities', () => {
    const prefix = encodePrefix(['t']);
    expect(plan({ tenant: 't' }, [tenantKey])).toMatchObject({ ranges: [{ low: prefix, high: prefixEnd(prefix) }] });
    const ranged = plan({ tenant: 't', status: 's', at: { $gte: 1, $lt: 5 } }, [tenantStatusAt]);
    const leading = encodePrefix(['t', 's']);
    expect(ranged).toMatchObject({
      ranges: [{ low: Buffer.concat([leading, encodeKey([1])]), high: Buffer.concat([leading, encodeKey([5])]) }],
    });
  });

  it('bounds a range by every range condition on the field, also those in separate $and clauses', () => {
    const leading = encodePrefix(['t', 's']);
    const ranged = plan(
      { $and: [{ tenant: 't', status: 's', at: { $gte: 1 } }, { at: { $lt: 9 } }, { at: { $gt: 2, $lte: 5 } }] },
      [tenantStatusAt],
    );
    expect(ranged).toMatchObject({
      ranges: [
        {
          low: keyAfter(Buffer.concat([leading, encodeKey([2])])),
          high: keyAfter(Buffer.concat([leading, encodeKey([5])])),
        },
      ],
    });
    // A bound of another type than the first range's cannot narrow it: left to the match.
    const mixed = plan({ $and: [{ tenant: 't', status: 's', at: { $gte: 1 } }, { at: { $lt: 'z' } }] }, [
      tenantStatusAt,
    ]);
    expect(mixed).toMatchObject({ ranges: [{ low: Buffer.concat([leading, encodeKey([1])]) }] });
  });

  it('looks up null as both null and missing, but never in a sparse index', () => {
    expect(plan({ status: null }, [status])).toMatchObject({ ranges: [exact([null]), exact([undefined])] });
    expect(plan({ status: null }, [index(['status'], { sparse: true })])).toEqual({ kind: 'scan' });
  });

  it('takes one of the conditions that different $and clauses put on a field, never their intersection', () => {
    const chosen = plan({ $and: [{ status: 'a' }, { status: { $in: ['b', 'c'] } }] }, [status]);
    expect(chosen).toMatchObject({ ranges: [exact(['a'])] });
  });

  it('scans for what an index cannot answer: $or, $ne, $nin, $exists, a RegExp, an object or a date', () => {
    for (const filter of [
      { $or: [{ status: 'a' }, { status: 'b' }] },
      { status: { $ne: 'a' } },
      { status: { $nin: ['a'] } },
      { status: { $exists: true } },
      { status: /a/ },
      { status: { nested: 1 } },
      { status: { $gt: new Date(0) } },
      { status: { $in: ['a', { nested: 1 }] } },
    ]) {
      expect(plan(filter, [status]), JSON.stringify(filter)).toEqual({ kind: 'scan' });
    }
  });

  it('walks an ordered index in the sort order when the filter fixes its leading fields', () => {
    const conditions = filterConditions({ tenant: 't', status: 's', note: 'n' });
    const walk = planWalk({ at: -1, _id: -1 }, conditions, [tenantStatusAt]);
    expect(walk).toMatchObject({ index: tenantStatusAt, descending: true, covered: 2 });
    expect(planWalk({ at: -1, _id: 1 }, conditions, [tenantStatusAt])).toBeNull();
    expect(planWalk({ at: 1 }, filterConditions({ tenant: 't' }), [tenantStatusAt])).toBeNull();
  });

  it('never walks an unordered or sparse index', () => {
    const conditions = filterConditions({});
    expect(planWalk({ at: 1 }, conditions, [index(['at'], { unordered: true })])).toBeNull();
    expect(planWalk({ at: 1 }, conditions, [index(['at'], { sparse: true })])).toBeNull();
    expect(planWalk({ at: 1 }, conditions, [index(['at'])])).not.toBeNull();
  });

  it('walks the primary key for an `_id` sort, within an `_id` range', () => {
    const walk = planWalk({ _id: 1 }, filterConditions({ _id: { $gt: 'k' } }), []);
    expect(walk).toMatchObject({ index: null, covered: 0.5 });
  });

  it('walks when the walk settles as much of the filter, probes when only the candidates count can tell', () => {
    const conditions = filterConditions({ status: 's', tenant: 't' });
    const walk = planWalk({ at: 1 }, filterConditions({}), [index(['at'])]);
    if (walk === null) throw new Error('no walk');
    expect(chooseWalk({ kind: 'scan' }, walk, 1)).toBe('walk');
    const byStatus = planFilter(conditions, [status]);
    expect(chooseWalk(byStatus, walk, 1)).toBe('probe');
    expect(chooseWalk(byStatus, walk, 0)).toBe('plan');
    expect(chooseWalk({ kind: 'ids', ids: ['a'] }, walk, 1)).toBe('plan');
  });
});

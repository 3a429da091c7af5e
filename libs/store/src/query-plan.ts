import { encodeKey, encodePrefix, encodeValue, idBytes, keyAfter, prefixEnd, typeBounds } from './index-keys.ts';
import type { IndexDefinition } from './index-keys.ts';
import type { Sort } from './types.ts';
import { isOperatorObject } from './validate.ts';

/**
 * How the sqlite engine finds a filter's candidates: by `_id`, through an
 * index, or by scanning. A plan only narrows: every candidate is matched
 * against the whole filter afterwards, so a plan must never leave out a
 * document the filter matches, and may bring extra ones. Conditions come
 * from the filter's top level and its `$and` clauses (`$or` branches are
 * not used). Conditions on one field from different clauses are never
 * intersected: on an array field each may hold for a different element.
 * Internal to this package.
 */

/** Keys from `low` (inclusive) to `high` (exclusive); `high` null: no upper bound. */
export interface KeyRange {
  low: Buffer;
  high: Buffer | null;
}

/** Where a read's candidates come from. */
export type Plan =
  | { kind: 'scan' }
  | { kind: 'ids'; ids: string[] }
  | { kind: 'primary'; range: KeyRange }
  | { kind: 'index'; index: IndexDefinition; ranges: KeyRange[]; score: number; unique: boolean };

/** Candidates in the order of a sort: the primary key (`index` null) or an index, read in key order. */
export interface OrderedWalk {
  index: IndexDefinition | null;
  range: KeyRange;
  descending: boolean;
  /** How many filter fields its range settles, comparable with a plan's {@link planScore}. */
  covered: number;
}

interface Bound {
  value: number | string;
  inclusive: boolean;
}

interface RangeCondition {
  kind: 'range';
  low: Bound | null;
  high: Bound | null;
}

/** What the filter says about one field that an index can use. */
export type Condition = { kind: 'eq'; values: unknown[] } | RangeCondition;

/** Every index key: each starts with a type tag below 0xff. */
const ALL_KEYS: KeyRange = { low: Buffer.alloc(0), high: Buffer.of(0xff) };

/** Above this many keys (a `$in` or the combinations of several) an index plan is not worth it. */
const MAX_KEYS = 256;

/** Values an index lookup can use: JSON scalars (null stands for null or missing). */
function isKeyScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function rangeOf(operators: Record<string, unknown>): Condition | null {
  let low: Bound | null = null;
  let high: Bound | null = null;
  let type: string | undefined;
  for (const operator of ['$gt', '$gte', '$lt', '$lte']) {
    const value = operators[operator];
    if (value === undefined) continue;
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) return null;
    // Comparisons only hold within one type: bounds of another type can only narrow further.
    type ??= typeof value;
    if (typeof value !== type) continue;
    const bound = { value, inclusive: operator.endsWith('e') };
    if (operator.startsWith('$g')) low = tighter(low, bound, 1);
    else high = tighter(high, bound, -1);
  }
  return low === null && high === null ? null : { kind: 'range', low, high };
}

/** The narrower of two bounds on one side (`side` 1 for lower bounds, -1 for upper ones). */
function tighter(current: Bound | null, next: Bound, side: 1 | -1): Bound {
  if (current === null) return next;
  if (current.value === next.value) return current.inclusive ? next : current;
  return (next.value > current.value ? 1 : -1) === side ? next : current;
}

function conditionsOf(value: unknown): Condition[] {
  if (isKeyScalar(value)) return [{ kind: 'eq', values: [value] }];
  if (!isOperatorObject(value)) return [];
  const found: Condition[] = [];
  if (Object.hasOwn(value, '$eq') && isKeyScalar(value.$eq)) found.push({ kind: 'eq', values: [value.$eq] });
  if (Array.isArray(value.$in) && value.$in.every(isKeyScalar)) found.push({ kind: 'eq', values: value.$in });
  const range = rangeOf(value);
  if (range !== null) found.push(range);
  return found;
}

function collectConditions(filter: Record<string, unknown>, out: Map<string, Condition[]>): void {
  // Object.keys and push: this runs for every store operation, and a pair array per member or a spread copy
  // per condition showed in allocation profiles.
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === '$and') for (const clause of value as Record<string, unknown>[]) collectConditions(clause, out);
    else if (!key.startsWith('$')) {
      const found = conditionsOf(value);
      if (found.length === 0) continue;
      const held = out.get(key);
      if (held === undefined) out.set(key, found);
      else held.push(...found);
    }
  }
}

/** The equality on `field` with the fewest values; a sparse index cannot answer null (its missing documents are left out). */
function bestEquality(conditions: Condition[] | undefined, sparse: boolean): unknown[] | null {
  let best: unknown[] | null = null;
  for (const condition of conditions ?? []) {
    if (condition.kind !== 'eq' || (sparse && condition.values.includes(null))) continue;
    if (best === null || condition.values.length < best.length) best = condition.values;
  }
  return best;
}

/** Every range condition on a field at once: the tightest bounds of the first one's type. */
function rangeCondition(conditions: Condition[] | undefined): RangeCondition | null {
  let found: RangeCondition | null = null;
  for (const condition of conditions ?? []) {
    if (condition.kind !== 'range') continue;
    if (found === null) {
      found = condition;
      continue;
    }
    const type: string = typeof (found.low ?? found.high)?.value;
    const { low, high } = condition;
    found = {
      kind: 'range',
      low: low !== null && typeof low.value === type ? tighter(found.low, low, 1) : found.low,
      high: high !== null && typeof high.value === type ? tighter(found.high, high, -1) : found.high,
    };
  }
  return found;
}

/** Key values for an equality: null stands for both null and missing. */
function keyValues(values: readonly unknown[]): unknown[] {
  const distinct = [...new Set(values)];
  return distinct.includes(null) ? [...distinct, undefined] : distinct;
}

/** The keys after `prefix` within a range condition on the (last, ordered) next component. */
function boundedRange(prefix: Buffer, range: RangeCondition): KeyRange {
  const sample = (range.low ?? range.high)?.value as number | string;
  const [typeStart, typeEnd] = typeBounds(prefix, sample);
  const at = (bound: Bound) => Buffer.concat([prefix, encodeValue(bound.value, false)]);
  const low = range.low === null ? typeStart : range.low.inclusive ? at(range.low) : keyAfter(at(range.low));
  const high = range.high === null ? typeEnd : range.high.inclusive ? keyAfter(at(range.high)) : at(range.high);
  return { low, high };
}

function exactRange(key: Buffer): KeyRange {
  return { low: key, high: keyAfter(key) };
}

function prefixRange(prefix: Buffer): KeyRange {
  return { low: prefix, high: prefixEnd(prefix) };
}

/** The ranges an index offers for the conditions: equalities on leading fields, then maybe a range on the last. */
function indexRanges(index: IndexDefinition, conditions: Map<string, Condition[]>): Plan | null {
  let prefixes: unknown[][] = [[]];
  let settled = 0;
  for (const field of index.fields) {
    const values = bestEquality(conditions.get(field), index.sparse);
    if (values === null) break;
    prefixes = prefixes.flatMap((prefix) => keyValues(values).map((value) => [...prefix, value]));
    if (prefixes.length > MAX_KEYS) return null;
    settled += 1;
  }
  const last = index.fields.length - 1;
  const range = settled === last ? rangeCondition(conditions.get(index.fields[last] as string)) : null;
  let ranges: KeyRange[];
  if (settled === index.fields.length) ranges = prefixes.map((values) => exactRange(encodeKey(values)));
  else if (range !== null) ranges = prefixes.map((values) => boundedRange(encodePrefix(values), range));
  else if (settled > 0) ranges = prefixes.map((values) => prefixRange(encodePrefix(values)));
  else return null;
  const unique = index.unique && settled === index.fields.length;
  return { kind: 'index', index, ranges, score: settled + (range === null ? 0 : 0.5), unique };
}

function primaryPlan(conditions: Condition[] | undefined): Plan | null {
  const values = bestEquality(conditions, false);
  if (values !== null) return { kind: 'ids', ids: values.filter((value) => typeof value === 'string') };
  const range = rangeCondition(conditions);
  if (range === null) return null;
  // `_id` is always a string: a numeric comparison matches nothing.
  if (typeof (range.low ?? range.high)?.value !== 'string') return { kind: 'ids', ids: [] };
  return { kind: 'primary', range: primaryRange(range) };
}

function primaryRange(range: RangeCondition): KeyRange {
  const at = (bound: Bound) => idBytes(bound.value as string);
  const low = range.low === null ? Buffer.alloc(0) : range.low.inclusive ? at(range.low) : keyAfter(at(range.low));
  const high = range.high === null ? null : range.high.inclusive ? keyAfter(at(range.high)) : at(range.high);
  return { low, high };
}

/** How much of the filter a plan settles: the primary key by equality beats every index. */
export function planScore(plan: Plan): number {
  if (plan.kind === 'ids') return Number.POSITIVE_INFINITY;
  if (plan.kind === 'primary') return 0.5;
  if (plan.kind === 'index') return plan.unique ? 1_000 : plan.score;
  return 0;
}

/** The filter's conditions, by field. */
export function filterConditions(filter: Record<string, unknown>): Map<string, Condition[]> {
  const conditions = new Map<string, Condition[]>();
  collectConditions(filter, conditions);
  return conditions;
}

/**
 * The best way to the filter's candidates: `_id` equality, then a unique
 * index all of whose fields are given, then the index settling most fields
 * (equalities before a range, fewer ranges on a tie), then an `_id` range,
 * else a scan.
 */
export function planFilter(conditions: Map<string, Condition[]>, indexes: readonly IndexDefinition[]): Plan {
  let best: Plan = primaryPlan(conditions.get('_id')) ?? { kind: 'scan' };
  // Nothing beats the primary key by equality (the most common read and write): no index is planned.
  if (best.kind === 'ids') return best;
  for (const index of indexes) {
    const plan = indexRanges(index, conditions);
    if (plan === null) continue;
    const [score, bestScore] = [planScore(plan), planScore(best)];
    const fewer = best.kind === 'index' && plan.kind === 'index' && plan.ranges.length < best.ranges.length;
    if (score > bestScore || (score === bestScore && fewer)) best = plan;
  }
  return best;
}

/**
 * A walk that yields candidates already in the order of `sort`, when one
 * exists: `{_id: d}` on the primary key, or `{f: d}` / `{f: d, _id: d}` on
 * an ordered, non-sparse index whose last field is `f` and whose other
 * fields the filter fixes to one non-null value each (ties then come in
 * `_id` order, the entries' own order).
 */
export function planWalk(
  sort: Sort,
  conditions: Map<string, Condition[]>,
  indexes: readonly IndexDefinition[],
): OrderedWalk | null {
  const criteria = Object.entries(sort);
  const [field, direction] = criteria[0] ?? [];
  if (field === undefined || criteria.length > 2) return null;
  if (criteria.length === 2 && (criteria[1]?.[0] !== '_id' || criteria[1][1] !== direction)) return null;
  const descending = direction === -1;
  if (field === '_id') {
    const range = rangeCondition(conditions.get('_id'));
    const bounded = range !== null && typeof (range.low ?? range.high)?.value === 'string';
    const keys = bounded ? primaryRange(range) : { low: Buffer.alloc(0), high: null };
    return { index: null, range: keys, descending, covered: bounded ? 0.5 : 0 };
  }
  let best: OrderedWalk | null = null;
  for (const index of indexes) {
    const walk = indexWalk(index, field, conditions, descending);
    if (walk !== null && (best === null || walk.covered > best.covered)) best = walk;
  }
  return best;
}

function indexWalk(
  index: IndexDefinition,
  field: string,
  conditions: Map<string, Condition[]>,
  descending: boolean,
): OrderedWalk | null {
  if (index.unordered || index.sparse || index.fields[index.fields.length - 1] !== field) return null;
  const prefix: unknown[] = [];
  for (const leading of index.fields.slice(0, -1)) {
    const values = bestEquality(conditions.get(leading), true);
    if (values?.length !== 1) return null;
    prefix.push(values[0]);
  }
  const encoded = encodePrefix(prefix);
  const range = rangeCondition(conditions.get(field));
  const keys = range !== null ? boundedRange(encoded, range) : prefix.length > 0 ? prefixRange(encoded) : ALL_KEYS;
  return { index, range: keys, descending, covered: prefix.length + (range === null ? 0 : 0.5) };
}

/**
 * Whether to read candidates through the walk rather than the plan: the
 * walk when it settles as much of the filter, the plan when that is the
 * primary key or a unique index; else `probe`: the walk only when the plan
 * would bring many candidates (and the read has a limit, so the walk may
 * stop early).
 */
export function chooseWalk(plan: Plan, walk: OrderedWalk, limit: number): 'walk' | 'plan' | 'probe' {
  if (plan.kind === 'ids' || (plan.kind === 'index' && plan.unique)) return 'plan';
  if (walk.covered >= planScore(plan)) return 'walk';
  return plan.kind === 'index' && limit > 0 ? 'probe' : 'plan';
}

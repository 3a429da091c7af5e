import { isOperatorObject, isPlainObject } from './validate.ts';
import type { NedbQuery } from './nedb.ts';

/**
 * Translation of a (validated) MongoDB-style filter into nedb's dialect.
 * nedb differs from MongoDB on a few points that this module evens out:
 * - equality with `null` (and `$eq: null`, `null` in `$in`) must also match a
 *   missing field; nedb only matches a stored null;
 * - `$ne`/`$nin` must match when *no* array element equals the value and must
 *   match a missing field; nedb tests elements one by one;
 * - `$exists: true` must match an empty array;
 * - `$regex` takes a string pattern plus `$options`; nedb wants a RegExp, and
 *   a `g`/`y` flag would make its `RegExp.test` stateful.
 * Internal to this package.
 */

function safeRegExp(pattern: string | RegExp, options = ''): RegExp {
  if (typeof pattern === 'string') return new RegExp(pattern, options);
  return new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
}

function nullClause(path: string): NedbQuery {
  return { $or: [{ [path]: null }, { [path]: { $exists: false } }] };
}

function equalityClause(path: string, value: unknown): NedbQuery {
  return value === null ? nullClause(path) : { [path]: value };
}

function inClause(path: string, values: readonly unknown[]): NedbQuery {
  const present = values.filter((value) => value !== null);
  const clause: NedbQuery = { [path]: { $in: present } };
  return present.length === values.length ? clause : { $or: [clause, nullClause(path)] };
}

/**
 * Splits one field's operators into those nedb evaluates natively (kept
 * together, so nedb can still use an index for them) and clauses ANDed beside.
 */
function translateOperators(path: string, operators: Record<string, unknown>, out: NedbQuery, and: NedbQuery[]): void {
  const native: Record<string, unknown> = {};
  for (const [operator, operand] of Object.entries(operators)) {
    switch (operator) {
      case '$eq':
        and.push(equalityClause(path, operand));
        break;
      case '$ne':
        and.push({ $not: equalityClause(path, operand) });
        break;
      case '$in':
        and.push(inClause(path, operand as unknown[]));
        break;
      case '$nin':
        and.push({ $not: inClause(path, operand as unknown[]) });
        break;
      case '$exists':
        // nedb tests an array element by element, so `$exists: true` would
        // miss an empty array; its negation of `$exists: false` does not.
        if (operand === true) and.push({ $not: { [path]: { $exists: false } } });
        else native.$exists = false;
        break;
      case '$regex':
        native.$regex = safeRegExp(operand as string | RegExp, operators.$options as string | undefined);
        break;
      case '$options':
        break;
      default:
        native[operator] = operand;
    }
  }
  if (Object.keys(native).length > 0) out[path] = native;
}

/** Translates a filter already accepted by `checkFilter`. */
export function toNedbQuery(filter: Record<string, unknown>): NedbQuery {
  const out: NedbQuery = {};
  const and: NedbQuery[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === '$or') out.$or = (value as Record<string, unknown>[]).map(toNedbQuery);
    else if (key === '$and') and.push(...(value as Record<string, unknown>[]).map(toNedbQuery));
    else if (value instanceof RegExp) out[key] = safeRegExp(value);
    else if (isOperatorObject(value)) translateOperators(key, value, out, and);
    else if (value === null) and.push(nullClause(key));
    else out[key] = value;
  }
  if (and.length > 0) out.$and = and;
  return out;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (!isPlainObject(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

function collectEqualities(filter: Record<string, unknown>, seed: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and') {
      for (const clause of value as Record<string, unknown>[]) collectEqualities(clause, seed);
    } else if (key === '$or') {
      const clauses = value as Record<string, unknown>[];
      if (clauses.length === 1) collectEqualities(clauses[0] as Record<string, unknown>, seed);
    } else if (isOperatorObject(value)) {
      if (Object.hasOwn(value, '$eq')) setPath(seed, key, value.$eq);
    } else if (!(value instanceof RegExp)) {
      setPath(seed, key, value);
    }
  }
}

/**
 * The document an upsert starts from, as MongoDB builds it: the filter's
 * equality conditions (top level, inside `$and`, inside a one-clause `$or`,
 * and `$eq`), with dotted paths expanded into nested objects.
 */
export function upsertSeed(filter: Record<string, unknown>): Record<string, unknown> {
  const seed: Record<string, unknown> = {};
  collectEqualities(filter, seed);
  return seed;
}

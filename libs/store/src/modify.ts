import { nedbModel } from './nedb.ts';
import type { NedbDocument, NedbQuery } from './nedb.ts';
import { isPlainObject } from './validate.ts';

/**
 * An update applied to a found document, as nedb's `model.modify` applies
 * it, without what that function repeats on every call: it checks the
 * update's shape and then every field name of the whole resulting document
 * (`checkObject`), which for a task document with its steps is most of the
 * cost of an update. Here the update was checked once already (`checkUpdate`
 * in validate.ts: only `$set`, `$unset`, `$inc` and `$push` with a value or
 * `{ $each: [...] }`, valid non-conflicting paths that never reach `_id`,
 * field names checked in every value), and the stored document was checked
 * when it was written; what the operators add is only those values under
 * those paths, so the result needs no second walk.
 *
 * Only the plain cases are done here: every step of a path on a plain object
 * (existing or created), `$inc` on a number or a missing field, `$push` onto
 * an array or a missing field. Anything else (a path through an array, null,
 * a scalar, a date or `__proto__`; `$inc` or `$push` on the wrong type) is handed to
 * nedb's own `modify` on the untouched document, so that its result and its
 * errors stay exactly nedb's. Internal to this package.
 */

const { deepCopy, modify } = nedbModel;

type Operators = Record<string, Record<string, unknown>>;

/** Thrown inside {@link applyModifiers} when a case is not a plain one: nedb's `modify` decides it. */
const NOT_PLAIN = Symbol('not plain');

/** The object holding the path's last field, creating missing plain objects on the way (`$unset`: none, undefined). */
function parentOf(document: Record<string, unknown>, parts: readonly string[], create: boolean) {
  let node = document;
  for (let i = 0; i < parts.length - 1; i += 1) {
    const part = parts[i] as string;
    const next = node[part];
    if (next === undefined) {
      if (!create) return undefined;
      const created: Record<string, unknown> = {};
      node[part] = created;
      node = created;
    } else if (isPlainObject(next)) {
      node = next;
    } else {
      throw NOT_PLAIN;
    }
  }
  return node;
}

function applyOne(document: Record<string, unknown>, operator: string, path: string, value: unknown): void {
  const parts = path.split('.');
  // `__proto__` reaches Object.prototype, which looks like a plain object: nedb's walk decides that one.
  if (parts.includes('__proto__')) throw NOT_PLAIN;
  const field = parts[parts.length - 1] as string;
  const parent = parentOf(document, parts, operator !== '$unset');
  if (parent === undefined) return;
  switch (operator) {
    case '$set':
      parent[field] = value;
      return;
    case '$unset':
      delete parent[field];
      return;
    case '$inc': {
      const current = parent[field];
      if (typeof value !== 'number') throw NOT_PLAIN;
      if (typeof current === 'number') parent[field] = current + value;
      else if (!Object.hasOwn(parent, field)) parent[field] = value;
      else throw NOT_PLAIN;
      return;
    }
    case '$push': {
      if (!Object.hasOwn(parent, field)) parent[field] = [];
      const target = parent[field];
      if (!Array.isArray(target)) throw NOT_PLAIN;
      if (isPlainObject(value) && Array.isArray(value['$each'])) target.push(...(value['$each'] as unknown[]));
      else target.push(value);
      return;
    }
    default:
      throw NOT_PLAIN;
  }
}

/**
 * A modified copy of `document` (the stored one is left as it is): the same
 * document nedb's `modify(document, modifiers)` returns, and the same error
 * when it throws. `modifiers` must have passed `checkUpdate` (and hold no
 * `$setOnInsert`, see `foundModifiers`).
 */
export function applyModifiers(document: NedbDocument, modifiers: NedbQuery): NedbDocument {
  const copy = deepCopy(document);
  try {
    const operators = modifiers as Operators;
    for (const operator of Object.keys(operators)) {
      const fields = operators[operator] as Record<string, unknown>;
      for (const path of Object.keys(fields)) applyOne(copy, operator, path, fields[path]);
    }
    return copy;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return modify(document, modifiers);
  }
}

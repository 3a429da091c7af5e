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

/**
 * Where the operators write: the document, or for a copy-on-write apply a
 * shallow copy of it, each object or array on a written path copied once
 * before its first change (`copied` holds the copies made), so that the
 * document given is never changed and the result shares what it left alone.
 */
interface Target {
  readonly document: Record<string, unknown>;
  readonly copied: Set<object> | null;
}

/** `value` as the apply may change it: itself in place, or a shallow copy made once per apply. */
function writable<V extends object>(target: Target, value: V): V {
  if (target.copied === null || target.copied.has(value)) return value;
  const copy = (Array.isArray(value) ? value.slice() : { ...value }) as V;
  target.copied.add(copy);
  return copy;
}

/** The object holding the path's last field, creating missing plain objects on the way (`$unset`: none, undefined). */
function parentOf(target: Target, parts: readonly string[], create: boolean) {
  let node = target.document;
  for (let i = 0; i < parts.length - 1; i += 1) {
    const part = parts[i] as string;
    const next = node[part];
    if (next === undefined) {
      if (!create) return undefined;
      const created: Record<string, unknown> = {};
      target.copied?.add(created);
      node[part] = created;
      node = created;
    } else if (isPlainObject(next)) {
      const own = writable(target, next);
      if (own !== next) node[part] = own;
      node = own;
    } else {
      throw NOT_PLAIN;
    }
  }
  return node;
}

function applyOne(target: Target, operator: string, path: string, value: unknown): void {
  const parts = path.split('.');
  // `__proto__` reaches Object.prototype, which looks like a plain object: nedb's walk decides that one.
  if (parts.includes('__proto__')) throw NOT_PLAIN;
  const field = parts[parts.length - 1] as string;
  const parent = parentOf(target, parts, operator !== '$unset');
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
      const missing = !Object.hasOwn(parent, field);
      const held = parent[field];
      if (!missing && !Array.isArray(held)) throw NOT_PLAIN;
      // A missing field gets a fresh array of this apply's own; an existing one is copied (once) before it grows.
      const list = missing ? [] : writable(target, held as unknown[]);
      if (list !== held) parent[field] = list;
      if (isPlainObject(value) && Array.isArray(value['$each'])) list.push(...(value['$each'] as unknown[]));
      else list.push(value);
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
 *
 * `shared`: the result may share with `document` what the update left
 * alone, instead of being a deep copy. Only for a document nobody changes
 * afterwards (a fresh parse of a stored row whose result is written and
 * returned): a task document's update then copies the few objects on its
 * paths, not its whole history of steps.
 */
export function applyModifiers(
  document: NedbDocument,
  modifiers: NedbQuery,
  options: { readonly shared?: boolean } = {},
): NedbDocument {
  const target: Target =
    options.shared === true
      ? { document: { ...document }, copied: new Set() }
      : { document: deepCopy(document) as Record<string, unknown>, copied: null };
  target.copied?.add(target.document);
  try {
    const operators = modifiers as Operators;
    for (const operator of Object.keys(operators)) {
      const fields = operators[operator] as Record<string, unknown>;
      for (const path of Object.keys(fields)) applyOne(target, operator, path, fields[path]);
    }
    return target.document as NedbDocument;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return modify(document, modifiers);
  }
}

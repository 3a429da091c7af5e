import { randomUUID } from 'node:crypto';
import { invalidCall } from './errors.ts';
import type { FindOptions, IndexOptions, IndexSpec, Projection, Sort } from './types.ts';

/**
 * Checks shared by both adapters, so that a filter, update or name is
 * refused the same way whichever backend runs. Internal to this package.
 */

const FIELD_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$exists',
  '$regex',
  '$options',
]);
const UPDATE_OPERATORS = new Set(['$set', '$unset', '$inc', '$push', '$setOnInsert']);
const COLLECTION_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const DATABASE_NAME = /^[A-Za-z0-9_-]{1,63}$/;
const REGEX_OPTIONS = /^[ims]*$/;

/** True for `{...}` literals and `Object.create(null)`; false for arrays, RegExp, Date. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** True when `value` is a plain object whose keys all start with `$`. */
export function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

/** Refuses a collection name that is not a safe file name (no separators, no `..`). */
export function assertCollectionName(name: string): void {
  if (typeof name !== 'string' || name.length > 100 || !COLLECTION_NAME.test(name) || name.startsWith('system.')) {
    throw invalidCall(`invalid collection name ${JSON.stringify(name)}`);
  }
}

/** Refuses a database name that MongoDB or a directory name would not take. */
export function assertDatabaseName(name: string): void {
  if (typeof name !== 'string' || !DATABASE_NAME.test(name)) {
    throw invalidCall(`invalid database name ${JSON.stringify(name)}`);
  }
}

/*
 * The walkers below run on every filter, update and document, so they take
 * the common case, nothing wrong, allocating little: plain objects are
 * walked by `Object.keys` (not `Object.entries`, a pair array per member;
 * not `for…in`, which would also see a member someone added to
 * `Object.prototype`), and a path for the error message is built only once
 * something was found, by walking again.
 */

/** True when `value` holds `undefined` anywhere (arrays and plain objects walked). */
function holdsUndefined(value: unknown): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (holdsUndefined(item)) return true;
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) if (holdsUndefined(value[key])) return true;
  }
  return false;
}

/** The path of the first `undefined` in `value` (which holds one), from `where`. */
function undefinedPath(value: unknown, where: string): string {
  if (Array.isArray(value)) {
    const index = value.findIndex(holdsUndefined);
    return undefinedPath(value[index], `${where}.${index}`);
  }
  if (isPlainObject(value)) {
    for (const key of Object.keys(value))
      if (holdsUndefined(value[key])) return undefinedPath(value[key], `${where}.${key}`);
  }
  return where;
}

function assertNoUndefined(value: unknown, where: string): void {
  if (holdsUndefined(value)) throw invalidCall(`undefined value at ${undefinedPath(value, where)}`);
}

function checkOperators(path: string, operators: Record<string, unknown>): void {
  for (const operator of Object.keys(operators)) {
    const operand = operators[operator];
    if (!FIELD_OPERATORS.has(operator)) throw invalidCall(`unsupported query operator ${operator} on ${path}`);
    assertNoUndefined(operand, `${path}.${operator}`);
    if ((operator === '$in' || operator === '$nin') && !Array.isArray(operand)) {
      throw invalidCall(`${operator} on ${path} needs an array`);
    }
    if (operator === '$exists' && typeof operand !== 'boolean') throw invalidCall(`$exists on ${path} needs a boolean`);
    if (operator === '$regex' && typeof operand !== 'string' && !(operand instanceof RegExp)) {
      throw invalidCall(`$regex on ${path} needs a string or RegExp`);
    }
  }
  const options = operators.$options;
  if (options !== undefined) {
    if (typeof operators.$regex !== 'string') throw invalidCall(`$options on ${path} needs a string $regex`);
    if (typeof options !== 'string' || !REGEX_OPTIONS.test(options)) {
      throw invalidCall(`$options on ${path} may only hold i, m and s`);
    }
  }
}

/**
 * Refuses unsupported operators, empty `$or`/`$and`, mixed operator and
 * field keys, and `undefined` anywhere (the driver would drop it and match
 * more documents than asked).
 */
export function checkFilter(filter: unknown, where = 'filter'): void {
  if (!isPlainObject(filter)) throw invalidCall(`${where} must be a plain object`);
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === '$or' || key === '$and') {
      if (!Array.isArray(value) || value.length === 0) throw invalidCall(`${key} needs a non-empty array`);
      value.forEach((clause, index) => checkFilter(clause, `${where}.${key}.${index}`));
    } else if (key.startsWith('$')) {
      throw invalidCall(`unsupported query operator ${key}`);
    } else if (isOperatorObject(value)) {
      checkOperators(key, value);
    } else {
      if (isPlainObject(value) && Object.keys(value).some((k) => k.startsWith('$'))) {
        throw invalidCall(`${key} mixes operators and fields`);
      }
      assertNoUndefined(value, key);
    }
  }
}

function isBadFieldName(key: string): boolean {
  return key === '' || key.charCodeAt(0) === 36 /* $ */ || key.includes('.');
}

/** True when a plain object in `value` has a bad field name. */
function holdsBadFieldName(value: unknown): boolean {
  if (Array.isArray(value)) {
    for (const item of value) if (holdsBadFieldName(item)) return true;
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) if (isBadFieldName(key) || holdsBadFieldName(value[key])) return true;
  }
  return false;
}

/** Throws for the first bad field name in `value` (which holds one), with its path from `where`. */
function throwBadFieldName(value: unknown, where: string): never {
  if (Array.isArray(value)) {
    const index = value.findIndex(holdsBadFieldName);
    return throwBadFieldName(value[index], `${where}.${index}`);
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (isBadFieldName(key)) {
      throw invalidCall(`field name ${JSON.stringify(key)} at ${where} is empty, starts with $ or holds a dot`);
    }
    if (holdsBadFieldName(object[key])) return throwBadFieldName(object[key], `${where}.${key}`);
  }
  throw new Error('throwBadFieldName: no bad field name');
}

function checkFieldNames(value: unknown, where: string): void {
  if (holdsBadFieldName(value)) throwBadFieldName(value, where);
}

/**
 * Checks a document to insert (plain object, string `_id` if any, field
 * names without a leading `$` or a dot) and returns a copy without
 * `undefined` members, `_id` first, generating a random UUID when absent.
 */
export function prepareDocument(document: unknown): Record<string, unknown> & { _id: string } {
  if (!isPlainObject(document)) throw invalidCall('a document must be a plain object');
  const { _id: id, ...rest } = stripUndefined(document);
  if (id !== undefined && (typeof id !== 'string' || id === '')) throw invalidCall('_id must be a non-empty string');
  checkFieldNames(rest, 'document');
  return { _id: id ?? randomUUID(), ...rest };
}

/** A deep copy of JSON-like data without `undefined` members (as the driver's `ignoreUndefined`). */
export function stripUndefined<V>(value: V): V {
  if (Array.isArray(value))
    return value.map((item: unknown) => (item === undefined ? null : stripUndefined(item))) as V;
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item !== undefined) copy[key] = stripUndefined(item);
  }
  return copy as V;
}

/** True for a dotted path of non-empty parts, none starting with `$` (scanned: no array of parts made). */
function isValidPath(path: string): boolean {
  let start = 0;
  for (let i = 0; i <= path.length; i += 1) {
    if (i < path.length && path.charCodeAt(i) !== 46 /* . */) continue;
    if (i === start || path.charCodeAt(start) === 36 /* $ */) return false;
    start = i + 1;
  }
  return true;
}

function checkPathSyntax(path: string, where: string): void {
  if (!isValidPath(path)) {
    throw invalidCall(`invalid field path ${JSON.stringify(path)} in ${where}`);
  }
}

function checkPath(path: string, operator: string): void {
  checkPathSyntax(path, operator);
  if ((path === '_id' || path.startsWith('_id.')) && operator !== '$setOnInsert') {
    throw invalidCall(`${operator} cannot change _id`);
  }
}

function checkOperand(operator: string, path: string, operand: unknown): void {
  if (operator === '$inc' && (typeof operand !== 'number' || !Number.isFinite(operand))) {
    throw invalidCall(`$inc on ${path} needs a finite number`);
  }
  if (operator === '$push' && isOperatorObject(operand)) {
    const keys = Object.keys(operand);
    if (keys.length !== 1 || keys[0] !== '$each' || !Array.isArray(operand.$each)) {
      throw invalidCall(`$push on ${path} takes a value or { $each: [...] }`);
    }
  }
  if (operator === '$setOnInsert' && path === '_id' && typeof operand !== 'string') {
    throw invalidCall('$setOnInsert._id must be a string');
  }
}

/** True when `a` and `b` are one path, or one is a prefix of the other (`a` and `a.b`). */
function overlaps(a: string, b: string): boolean {
  if (a.length > b.length) return overlaps(b, a);
  return a === b || (b.startsWith(a) && b.charCodeAt(a.length) === 46); // '.'
}

/** Updates name a few paths: below this many, every pair is compared (no sorted copy per update). */
const PAIRWISE_PATHS = 16;

function assertNoConflicts(paths: string[]): void {
  if (paths.length < PAIRWISE_PATHS) {
    for (let i = 1; i < paths.length; i += 1) {
      for (let j = 0; j < i; j += 1) {
        const [a, b] = [paths[j] as string, paths[i] as string];
        if (overlaps(a, b)) throw invalidCall(`update paths ${a < b ? a : b} and ${a < b ? b : a} conflict`);
      }
    }
    return;
  }
  const sorted = paths.sort(); // the caller's own array, not kept
  for (let i = 1; i < sorted.length; i += 1) {
    const previous = sorted[i - 1] as string;
    const current = sorted[i] as string;
    if (current === previous || current.startsWith(`${previous}.`)) {
      throw invalidCall(`update paths ${previous} and ${current} conflict`);
    }
  }
}

/**
 * Checks an update (operators only, known operators, no `_id` change except
 * through `$setOnInsert`, no two operators on overlapping paths) and returns
 * a deep copy without `undefined` members.
 */
export function checkUpdate(update: unknown): Record<string, Record<string, unknown>> {
  if (!isPlainObject(update) || Object.keys(update).length === 0) {
    throw invalidCall('update must be a non-empty object of operators');
  }
  const paths: string[] = [];
  for (const operator of Object.keys(update)) {
    const operand = update[operator];
    if (!UPDATE_OPERATORS.has(operator)) throw invalidCall(`unsupported update operator ${operator}`);
    if (!isPlainObject(operand)) throw invalidCall(`${operator} needs an object`);
    for (const path of Object.keys(operand)) {
      const value = operand[path];
      if (value === undefined) continue;
      checkPath(path, operator);
      checkOperand(operator, path, value);
      const named = operator !== '$push' || !isOperatorObject(value) ? value : value.$each;
      if (holdsBadFieldName(named)) throwBadFieldName(named, `${operator}.${path}`);
      paths.push(path);
    }
  }
  assertNoConflicts(paths);
  return stripUndefined(update) as Record<string, Record<string, unknown>>;
}

function checkCount(value: number | undefined, name: string): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw invalidCall(`${name} must be a non-negative integer`);
  }
}

/** Refuses sort directions other than 1 and -1. */
export function checkSort(sort: Sort | undefined): void {
  if (sort === undefined) return;
  if (!isPlainObject(sort)) throw invalidCall('sort must be a plain object');
  for (const [field, direction] of Object.entries(sort)) {
    if (direction !== 1 && direction !== -1) throw invalidCall(`sort direction of ${field} must be 1 or -1`);
  }
}

function checkProjection(projection: Projection | undefined): void {
  if (projection === undefined) return;
  if (!isPlainObject(projection)) throw invalidCall('projection must be a plain object');
  const modes = new Set(
    Object.entries(projection)
      .filter(([field]) => field !== '_id')
      .map(([, mode]) => mode),
  );
  if ([...modes, projection._id].some((mode) => mode !== undefined && mode !== 0 && mode !== 1)) {
    throw invalidCall('projection values must be 0 or 1');
  }
  if (modes.size > 1) throw invalidCall('projection cannot both include and exclude fields (except _id)');
}

/** Checks sort, limit, skip and projection. */
export function checkFindOptions(options: FindOptions): void {
  checkSort(options.sort);
  checkCount(options.limit, 'limit');
  checkCount(options.skip, 'skip');
  checkProjection(options.projection);
}

/** Checks an index specification and returns its MongoDB-style name (`a_1_b_-1`). */
export function checkIndex(keys: IndexSpec, options: IndexOptions): string {
  const entries = isPlainObject(keys) ? Object.entries(keys) : [];
  if (entries.length === 0) throw invalidCall('an index needs at least one key');
  for (const [field, direction] of entries) {
    checkPathSyntax(field, 'createIndex');
    if (direction !== 1 && direction !== -1) throw invalidCall(`index direction of ${field} must be 1 or -1`);
  }
  if (options.sparse === true && entries.length > 1) {
    throw invalidCall('sparse indexes must have one key (compound sparse indexes differ between backends)');
  }
  return entries.map(([field, direction]) => `${field}_${direction}`).join('_');
}

import { nedbModel } from './nedb.ts';

/**
 * Index keys of the sqlite engine: which keys a document has in an index,
 * and their byte encoding. Keys follow MongoDB: a missing field is indexed
 * (and unique) as null, unless the index is sparse; an array gives one key
 * per distinct element (nested arrays flattened, as nedb's matching does);
 * a compound index gives every combination. The encoding makes SQLite's
 * byte order nedb's `compareThings` order within a type (and across types,
 * in its type order), so ranges and ordered walks can use the index.
 * Internal to this package.
 */

const { getDotValue } = nedbModel;

/** An index as the sqlite engine keeps it. */
export interface IndexDefinition {
  /** The index's row in the metadata table: the `ix` of its entries. */
  readonly ix: number;
  /** Its identity: see {@link indexIdentity}. */
  readonly name: string;
  /** The key fields, in declaration order. */
  readonly fields: readonly string[];
  readonly unique: boolean;
  readonly sparse: boolean;
  /**
   * True once a document held an array or an object in one of the fields:
   * a document may then have several keys, and key order is no longer the
   * sort order, so the index cannot serve a sort.
   */
  readonly unordered: boolean;
}

/** The keys of one document in one index. */
export interface DocumentKeys {
  /** Distinct keys; none when a sparse index leaves the document out. */
  keys: Buffer[];
  /** The field values each key encodes (`undefined` for a missing field), parallel to `keys`. */
  values: unknown[][];
  /** True when a field held an array or an object (see {@link IndexDefinition.unordered}). */
  unordered: boolean;
}

/**
 * An index's identity: its fields sorted and comma-joined, as nedb names
 * indexes (neither the order nor the directions of the keys count).
 */
export function indexIdentity(fields: readonly string[]): string {
  return [...fields].sort().join(',');
}

/** Type tags in `compareThings`' type order: missing, null, number, string, boolean, date, array, object. */
const TAG = {
  missing: 0x10,
  null: 0x11,
  number: 0x20,
  string: 0x30,
  boolean: 0x40,
  date: 0x50,
  array: 0x60,
  object: 0x70,
};
const MISSING = Buffer.of(TAG.missing);
const NULL = Buffer.of(TAG.null);
const FALSE = Buffer.of(TAG.boolean, 0);
const TRUE = Buffer.of(TAG.boolean, 1);
const ZERO = Buffer.of(0);

/** A finite number as 8 bytes whose unsigned order is numeric order (-0 as 0). */
function encodeNumber(tag: number, value: number): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = tag;
  out.writeDoubleBE(value === 0 ? 0 : value, 1);
  if ((out[1] as number) & 0x80) for (let i = 1; i < 9; i += 1) out[i] = ~(out[i] as number) & 0xff;
  else out[1] = (out[1] as number) | 0x80;
  return out;
}

/**
 * Text as UTF-16 big-endian code units: their byte order is JavaScript's
 * string order (UTF-8's is not, past U+FFFF), and lone surrogates survive.
 * `delimited` prefixes the length, for components that others follow.
 */
function encodeText(tag: number, text: string, delimited: boolean): Buffer {
  const head = delimited ? 5 : 1;
  const out = Buffer.allocUnsafe(head + text.length * 2);
  out[0] = tag;
  if (delimited) out.writeUInt32BE(text.length * 2, 1);
  out.write(text, head, 'utf16le');
  out.subarray(head).swap16();
  return out;
}

/** Objects compare by content whatever their key order (as nedb's equality does). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return { $$date: value.getTime() };
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key]);
  return out;
}

/**
 * One field value as a key component. A number that is not finite is
 * stored by JSON as null, so it is keyed as null.
 */
export function encodeValue(value: unknown, delimited: boolean): Buffer {
  switch (typeof value) {
    case 'undefined':
      return MISSING;
    case 'number':
      return Number.isFinite(value) ? encodeNumber(TAG.number, value) : NULL;
    case 'string':
      return encodeText(TAG.string, value, delimited);
    case 'boolean':
      return value ? TRUE : FALSE;
    case 'object':
      if (value === null) return NULL;
      if (value instanceof Date) return encodeNumber(TAG.date, value.getTime());
      return encodeText(Array.isArray(value) ? TAG.array : TAG.object, JSON.stringify(canonical(value)), delimited);
    default:
      return MISSING;
  }
}

/** The key of one combination of field values: each component but the last self-delimiting, the last in order. */
export function encodeKey(values: readonly unknown[]): Buffer {
  if (values.length === 1) return encodeValue(values[0], false);
  return Buffer.concat(values.map((value, i) => encodeValue(value, i < values.length - 1)));
}

/** The bytes that every key whose first components are `values` starts with. */
export function encodePrefix(values: readonly unknown[]): Buffer {
  return Buffer.concat(values.map((value) => encodeValue(value, true)));
}

/** The first key of `sample`'s type after `prefix`, and the first key past that type. */
export function typeBounds(prefix: Buffer, sample: number | string): [Buffer, Buffer] {
  const tag = typeof sample === 'number' ? TAG.number : TAG.string;
  return [Buffer.concat([prefix, Buffer.of(tag)]), Buffer.concat([prefix, Buffer.of(tag + 1)])];
}

/** The smallest key greater than `key`. */
export function keyAfter(key: Buffer): Buffer {
  return Buffer.concat([key, ZERO]);
}

/** The smallest key greater than every key starting with `prefix` (a non-empty prefix that is not all 0xff). */
export function prefixEnd(prefix: Buffer): Buffer {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end -= 1;
  const out = Buffer.from(prefix.subarray(0, end));
  out[end - 1] = (out[end - 1] as number) + 1;
  return out;
}

/** A document's `_id` as stored: UTF-16 big-endian, so that SQLite orders ids as JavaScript does. */
export function idBytes(id: string): Buffer {
  const out = Buffer.from(id, 'utf16le');
  return out.swap16();
}

function collectLeaves(value: unknown, out: unknown[]): void {
  if (!Array.isArray(value)) out.push(value);
  // An empty array is a value of its own (MongoDB indexes it too); nested arrays are flattened.
  else if (value.length === 0) out.push(value);
  else for (const element of value) collectLeaves(element, out);
}

function isComposite(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !(value instanceof Date);
}

/** Every combination of one value from each list, in order. */
export function combinations(lists: readonly (readonly unknown[])[]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const list of lists) out = out.flatMap((prefix) => list.map((value) => [...prefix, value]));
  return out;
}

/** The distinct keys of `document` in an index on `fields`. */
export function documentKeys(document: object, index: Pick<IndexDefinition, 'fields' | 'sparse'>): DocumentKeys {
  const raw = index.fields.map((field) => getDotValue(document, field));
  if (index.sparse && raw[0] === undefined) return { keys: [], values: [], unordered: false };
  const unordered = raw.some(isComposite);
  const lists = raw.map((value) => {
    const leaves: unknown[] = [];
    collectLeaves(value, leaves);
    return leaves;
  });
  const keys: Buffer[] = [];
  const values: unknown[][] = [];
  const seen = new Set<string>();
  for (const combination of lists.every((list) => list.length === 1) ? [lists.map((l) => l[0])] : combinations(lists)) {
    const key = encodeKey(combination);
    const text = key.toString('latin1');
    if (seen.has(text)) continue;
    seen.add(text);
    keys.push(key);
    values.push(combination);
  }
  return { keys, values, unordered };
}

/**
 * The keys a unique index must find free for `values`: a missing field
 * counts as null (as in MongoDB), so each null or missing component stands
 * for both.
 */
export function clashingKeys(values: readonly unknown[]): Buffer[] {
  if (!values.some((value) => value === undefined || value === null)) return [encodeKey(values)];
  return combinations(values.map((value) => (value === undefined || value === null ? [undefined, null] : [value]))).map(
    encodeKey,
  );
}

/** The key a DuplicateKeyError reports: the value (null when missing), or `{ field: value }` for a compound index. */
export function reportedKey(fields: readonly string[], values: readonly unknown[]): unknown {
  if (fields.length === 1) return values[0] ?? null;
  return Object.fromEntries(fields.map((field, i) => [field, values[i] ?? null]));
}

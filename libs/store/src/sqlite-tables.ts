import type { IndexDefinition } from './index-keys.ts';
import type { KeyRange } from './query-plan.ts';
import type { Connection } from './sqlite-connection.ts';

/**
 * The SQL of one collection, and nothing else: a table of documents
 * (`c:<name>`: `_id` as UTF-16BE bytes, the document as JSON text), a table
 * of index entries (`e:<name>`: index, key, `_id`; see `tableSuffix` for
 * `<name>`), and its rows in the
 * store's table of declared indexes. No transactions and no semantics
 * here: the callers hold a transaction around these. Internal to this
 * package.
 */

/** One row read with its `_id`: the id's bytes tell duplicates apart without parsing the document. */
export interface DocumentRow {
  id: Uint8Array;
  doc: string;
}

interface IndexRow {
  ix: number;
  name: string;
  fields: string;
  unique: number;
  sparse: number;
  unordered: number;
}

/** A quoted SQL identifier (collection names hold dots and dashes). */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The part of a table's name that names its collection. SQLite compares
 * identifiers without case, collections are told apart by it: each capital
 * becomes `^` and its lower case (`^` is not allowed in collection names).
 */
function tableSuffix(collection: string): string {
  return collection.replace(/[A-Z]/g, (capital) => `^${capital.toLowerCase()}`);
}

export class CollectionTables {
  readonly #connection: Connection;
  readonly #collection: string;
  readonly #suffix: string;
  /** Quoted table names. */
  readonly #documents: string;
  readonly #entries: string;
  /**
   * The SQL of the statements every operation runs, built once: the
   * connection finds a prepared statement by its text, and a string made
   * anew on each call is hashed anew (a profile showed the lookup at 1% of
   * the services' CPU); the same string object keeps its hash.
   */
  readonly #sql: {
    readonly document: string;
    readonly insert: string;
    readonly replace: string;
    readonly delete: string;
    readonly addKey: string;
    readonly removeKey: string;
    readonly keyTaken: string;
    readonly indexRange: { readonly ASC: string; readonly DESC: string };
  };

  constructor(connection: Connection, collection: string) {
    this.#connection = connection;
    this.#collection = collection;
    this.#suffix = tableSuffix(collection);
    const documents = quoteIdentifier(`c:${this.#suffix}`);
    const entries = quoteIdentifier(`e:${this.#suffix}`);
    this.#documents = documents;
    this.#entries = entries;
    const indexRange = (direction: 'ASC' | 'DESC'): string =>
      `SELECT e.id AS id, c.doc AS doc FROM ${entries} AS e JOIN ${documents} AS c ON c.id = e.id ` +
      `WHERE e.ix = ? AND e.key >= ? AND e.key < ? ORDER BY e.key ${direction}, e.id ${direction}`;
    this.#sql = {
      document: `SELECT doc FROM ${documents} WHERE id = ?`,
      insert: `INSERT INTO ${documents} (id, doc) VALUES (?, ?) ON CONFLICT DO NOTHING`,
      replace: `UPDATE ${documents} SET doc = ? WHERE id = ?`,
      delete: `DELETE FROM ${documents} WHERE id = ?`,
      addKey: `INSERT OR IGNORE INTO ${entries} (ix, key, id) VALUES (?, ?, ?)`,
      removeKey: `DELETE FROM ${entries} WHERE ix = ? AND key = ? AND id = ?`,
      keyTaken: `SELECT 1 FROM ${entries} WHERE ix = ? AND key = ? AND id <> ? LIMIT 1`,
      indexRange: { ASC: indexRange('ASC'), DESC: indexRange('DESC') },
    };
  }

  #run(sql: string, ...params: (Buffer | Uint8Array | string | number)[]) {
    return this.#connection.change(sql, ...params);
  }

  /** Runs the write's last change (see `Connection.lastChange`) when `last`, else any change. */
  #runMaybeLast(last: boolean, sql: string, ...params: (Buffer | Uint8Array | string | number)[]) {
    return last ? this.#connection.lastChange(sql, ...params) : this.#run(sql, ...params);
  }

  exists(): boolean {
    const sql = `SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`;
    return this.#connection.statement(sql).get(`c:${this.#suffix}`) !== undefined;
  }

  /**
   * Creates the tables (idempotent). The entries' own key serves lookups,
   * ordered walks and removals: a document's entries are removed by the
   * keys computed from it, as they were added, so no second tree of the
   * entries by `_id` is kept up to date on every write.
   */
  create(): void {
    this.#connection.exec(`
      CREATE TABLE IF NOT EXISTS ${this.#documents} (id BLOB PRIMARY KEY NOT NULL, doc TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS ${this.#entries} (
        ix INTEGER NOT NULL, key BLOB NOT NULL, id BLOB NOT NULL, PRIMARY KEY (ix, key, id)
      ) WITHOUT ROWID;
    `);
  }

  /** True when the entries still have the index by `_id` that stores created before 2026-11-25 kept. */
  hasLegacyIdIndex(): boolean {
    const sql = `SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?`;
    return this.#connection.statement(sql).get(`e:${this.#suffix}:id`) !== undefined;
  }

  /** Drops that index: every write of an entry paid for it, and nothing reads it any more. */
  dropLegacyIdIndex(): void {
    this.#connection.exec(`DROP INDEX IF EXISTS ${quoteIdentifier(`e:${this.#suffix}:id`)}`);
  }

  count(): number {
    return (this.#connection.statement(`SELECT count(*) AS n FROM ${this.#documents}`).get() as { n: number }).n;
  }

  document(id: Buffer): string | undefined {
    const row = this.#connection.statement(this.#sql.document).get(id);
    return (row as { doc: string } | undefined)?.doc;
  }

  /** Every document, in storage order. */
  scan(): Iterable<DocumentRow> {
    return this.#connection.statement(`SELECT id, doc FROM ${this.#documents}`).iterate() as Iterable<DocumentRow>;
  }

  /** The documents whose `_id` bytes are in `range`, in `_id` order. */
  primaryRange(range: KeyRange, descending: boolean): Iterable<DocumentRow> {
    const upper = range.high === null ? '' : ' AND id < ?';
    const sql = `SELECT id, doc FROM ${this.#documents} WHERE id >= ?${upper} ORDER BY id ${descending ? 'DESC' : 'ASC'}`;
    const params = range.high === null ? [range.low] : [range.low, range.high];
    return this.#connection.statement(sql).iterate(...params) as Iterable<DocumentRow>;
  }

  /** The documents with a key of index `ix` in `range`, in key then `_id` order (once per key they have). */
  indexRange(ix: number, range: KeyRange, descending: boolean): Iterable<DocumentRow> {
    const sql = descending ? this.#sql.indexRange.DESC : this.#sql.indexRange.ASC;
    return this.#connection
      .statement(sql)
      .iterate(ix, range.low, range.high ?? Buffer.of(0xff)) as Iterable<DocumentRow>;
  }

  /** How many keys of index `ix` are in `range`, counting no further than `cap`. */
  countKeys(ix: number, range: KeyRange, cap: number): number {
    const sql = `SELECT count(*) AS n FROM (SELECT 1 FROM ${this.#entries} WHERE ix = ? AND key >= ? AND key < ? LIMIT ?)`;
    const row = this.#connection.statement(sql).get(ix, range.low, range.high ?? Buffer.of(0xff), cap);
    return (row as { n: number }).n;
  }

  /**
   * Inserts a document; false when its `_id` is taken. `last`: the write's
   * last change when it succeeds (see `Connection.lastChange`), as for
   * {@link replace} and {@link delete}.
   */
  insert(id: Buffer, doc: string, last = false): boolean {
    return this.#runMaybeLast(last, this.#sql.insert, id, doc).changes === 1;
  }

  replace(id: Buffer, doc: string, last = false): void {
    this.#runMaybeLast(last, this.#sql.replace, doc, id);
  }

  /** Deletes a document (its index entries are the caller's: see `IndexEntries.removed`). */
  delete(id: Uint8Array, last = false): void {
    this.#runMaybeLast(last, this.#sql.delete, id);
  }

  addKey(ix: number, key: Buffer, id: Uint8Array): void {
    this.#run(this.#sql.addKey, ix, key, id);
  }

  removeKey(ix: number, key: Buffer, id: Uint8Array): void {
    this.#run(this.#sql.removeKey, ix, key, id);
  }

  /** True when another document than `id` has `key` in index `ix`. */
  keyTaken(ix: number, key: Buffer, id: Uint8Array): boolean {
    return this.#connection.statement(this.#sql.keyTaken).get(ix, key, id) !== undefined;
  }

  /** The declared indexes, as stored. */
  indexes(): IndexDefinition[] {
    const sql = `SELECT ix, name, fields, "unique", sparse, unordered FROM "store:indexes" WHERE collection = ? ORDER BY ix`;
    const rows = this.#connection.statement(sql).all(this.#collection) as unknown as IndexRow[];
    return rows.map((row) => ({
      ix: row.ix,
      name: row.name,
      fields: JSON.parse(row.fields) as string[],
      unique: row.unique === 1,
      sparse: row.sparse === 1,
      unordered: row.unordered === 1,
    }));
  }

  /** Declares an index without entries; returns its `ix`. */
  declareIndex(name: string, fields: readonly string[], unique: boolean, sparse: boolean): number {
    const sql =
      `INSERT INTO "store:indexes" (collection, name, fields, "unique", sparse, unordered) ` +
      `VALUES (?, ?, ?, ?, ?, 0)`;
    const result = this.#run(sql, this.#collection, name, JSON.stringify(fields), unique ? 1 : 0, sparse ? 1 : 0);
    return Number(result.lastInsertRowid);
  }

  /** Removes an index and its entries. */
  forgetIndex(ix: number): void {
    this.#run(`DELETE FROM ${this.#entries} WHERE ix = ?`, ix);
    this.#run(`DELETE FROM "store:indexes" WHERE ix = ?`, ix);
  }

  /** True when a nedb datafile of this collection was imported. */
  migrated(): boolean {
    const sql = `SELECT 1 FROM "store:migrations" WHERE collection = ?`;
    return this.#connection.statement(sql).get(this.#collection) !== undefined;
  }

  recordMigration(file: string, documents: number): void {
    const sql = `INSERT INTO "store:migrations" (collection, file, documents, at) VALUES (?, ?, ?, ?)`;
    this.#run(sql, this.#collection, file, documents, new Date().toISOString());
  }

  markUnordered(ix: number): void {
    this.#run(`UPDATE "store:indexes" SET unordered = 1 WHERE ix = ?`, ix);
  }
}

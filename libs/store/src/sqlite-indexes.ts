import { DuplicateKeyError } from './errors.ts';
import { clashingKeys, documentKeys, reportedKey } from './index-keys.ts';
import type { DocumentKeys, IndexDefinition } from './index-keys.ts';
import { deserializeDocument } from './nedb.ts';
import type { NedbDocument } from './nedb.ts';
import type { CollectionTables } from './sqlite-tables.ts';

/**
 * Keeps one collection's index entries in step with its documents, inside
 * the caller's write transaction, and refuses what a unique index refuses
 * with the DuplicateKeyError the nedb engine throws (the caller's rollback
 * then takes back whatever the write had done). Internal to this package.
 */

/** One modified document: its `_id` bytes and both versions. */
export interface Change {
  id: Buffer;
  oldDoc: NedbDocument;
  newDoc: NedbDocument;
}

export class IndexEntries {
  readonly #tables: CollectionTables;
  readonly #collection: string;

  constructor(tables: CollectionTables, collection: string) {
    this.#tables = tables;
    this.#collection = collection;
  }

  /** Adds a new document's entries to every index. */
  inserted(indexes: IndexDefinition[], id: Buffer, document: NedbDocument): void {
    indexes.forEach((index, i) => {
      const found = documentKeys(document, index);
      this.#add(
        index,
        id,
        found,
        found.keys.map(() => true),
      );
      this.#noteOrder(indexes, i, found);
    });
  }

  /** Removes a deleted document's entries from every index: its keys, computed as when they were added. */
  removed(indexes: IndexDefinition[], id: Buffer, document: NedbDocument): void {
    for (const index of indexes) {
      for (const key of documentKeys(document, index).keys) this.#tables.removeKey(index.ix, key, id);
    }
  }

  /**
   * Moves modified documents' entries: first every key they lost, then
   * every key they gained, so that documents may trade keys of a unique
   * index among themselves (as nedb's re-indexing allows). Keys kept stay.
   * An index none of whose fields lies on one of the `touched` paths (the
   * update's, each operator naming what it changes) keeps its keys, and is
   * not looked at: most updates change no indexed field.
   */
  modified(indexes: IndexDefinition[], changes: readonly Change[], touched: readonly string[]): void {
    indexes.forEach((index, i) => {
      if (!index.fields.some((field) => touched.some((path) => overlaps(field, path)))) return;
      const gains = changes.map(({ id, oldDoc, newDoc }) => {
        const before = documentKeys(oldDoc, index);
        const after = documentKeys(newDoc, index);
        const lost = new Set(before.keys.map((key) => key.toString('latin1')));
        const gained = after.keys.map((key) => !lost.delete(key.toString('latin1')));
        for (const key of before.keys) if (lost.has(key.toString('latin1'))) this.#tables.removeKey(index.ix, key, id);
        return { id, after, gained };
      });
      for (const { id, after, gained } of gains) {
        this.#add(index, id, after, gained);
        this.#noteOrder(indexes, i, after);
      }
    });
  }

  /**
   * Builds the entries of an index just declared, from every stored
   * document; returns whether the index came out unordered.
   */
  build(index: IndexDefinition): boolean {
    let unordered = false;
    for (const row of this.#tables.scan()) {
      const document = deserializeDocument(row.doc);
      const found = documentKeys(document, index);
      this.#add(
        index,
        Buffer.from(row.id),
        found,
        found.keys.map(() => true),
      );
      unordered ||= found.unordered;
    }
    if (unordered) this.#tables.markUnordered(index.ix);
    return unordered;
  }

  /** Adds the keys of `found` flagged in `adding`, after checking a unique index has them free. */
  #add(index: IndexDefinition, id: Buffer, found: DocumentKeys, adding: readonly boolean[]): void {
    found.keys.forEach((key, i) => {
      if (!adding[i]) return;
      const values = found.values[i] as unknown[];
      if (index.unique && clashingKeys(values).some((clash) => this.#tables.keyTaken(index.ix, clash, id))) {
        throw new DuplicateKeyError(this.#collection, { key: reportedKey(index.fields, values) });
      }
      this.#tables.addKey(index.ix, key, id);
    });
  }

  /** Records, once, that an index met an array or an object (see {@link IndexDefinition.unordered}). */
  #noteOrder(indexes: IndexDefinition[], i: number, found: DocumentKeys): void {
    const index = indexes[i] as IndexDefinition;
    if (!found.unordered || index.unordered) return;
    this.#tables.markUnordered(index.ix);
    indexes[i] = { ...index, unordered: true };
  }
}

/** True when one dotted path is the other or lies inside it: changing either may change the other. */
export function overlaps(field: string, path: string): boolean {
  if (field === path) return true;
  return field.length > path.length
    ? field.startsWith(path) && field[path.length] === '.'
    : path.startsWith(field) && path[field.length] === '.';
}

import { readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { repairTornTail } from './append-log.ts';
import { StoreError, isDuplicateKeyError } from './errors.ts';
import { idBytes } from './index-keys.ts';
import { Datastore, serializeDocument } from './nedb.ts';
import type { NedbDocument } from './nedb.ts';
import type { Connection } from './sqlite-connection.ts';
import { IndexEntries } from './sqlite-indexes.ts';
import { CollectionTables } from './sqlite-tables.ts';
import { assertCollectionName } from './validate.ts';

/**
 * Import of the nedb engine's datafiles into the sqlite engine. A directory
 * the nedb engine wrote holds `<collection>.db` files; when the sqlite
 * engine opens it, each one whose collection has no table yet is loaded
 * with nedb's own machinery (the latest version of each document, and the
 * indexes the file declares), written in one transaction together with a
 * record of the import, then renamed `<collection>.db.migrated`. A crash
 * between the commit and the rename leaves the record, so the next open
 * only renames. Internal to this package.
 */

/** What a datafile holds once nedb has loaded it. */
interface Datafile {
  documents: NedbDocument[];
  indexes: { fieldName: string; unique: boolean; sparse: boolean }[];
}

function isCollectionName(name: string): boolean {
  try {
    assertCollectionName(name);
    return true;
  } catch {
    return false;
  }
}

/** Loads a datafile without changing it (nedb would compact it), after cutting a torn last line as the nedb engine does. */
async function loadDatafile(file: string, name: string, report: (error: StoreError) => void): Promise<Datafile> {
  const dropped = await repairTornTail(file);
  if (dropped > 0) {
    report(new StoreError(`embedded ${name}: dropped a torn last line (${dropped} bytes) left by a crash`));
  }
  const datastore = new Datastore({ filename: file });
  datastore.persistence.persistCachedDatabaseAsync = async () => undefined;
  await datastore.loadDatabaseAsync();
  const indexes = Object.values(datastore.indexes).filter((index) => index.fieldName !== '_id');
  return { documents: datastore.getAllData(), indexes };
}

/**
 * Writes the documents, then builds the declared indexes. nedb counted a
 * missing field apart from null; a unique index that does not hold once
 * they count the same is left out and reported (the service's own
 * createIndex then fails loudly).
 */
function importDatafile(tables: CollectionTables, name: string, data: Datafile, report: (e: StoreError) => void): void {
  tables.create();
  for (const document of data.documents) tables.insert(idBytes(document._id), serializeDocument(document));
  const entries = new IndexEntries(tables, name);
  for (const { fieldName, unique, sparse } of data.indexes) {
    const fields = fieldName.split(',');
    const ix = tables.declareIndex(fieldName, fields, unique, sparse);
    try {
      entries.build({ ix, name: fieldName, fields, unique, sparse, unordered: false });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      tables.forgetIndex(ix);
      report(
        new StoreError(`embedded ${name}: unique index ${fieldName} has duplicates, not imported`, { cause: error }),
      );
    }
  }
}

async function migrateDatafile(
  connection: Connection,
  directory: string,
  name: string,
  report: (error: StoreError) => void,
): Promise<void> {
  const file = join(directory, `${name}.db`);
  const tables = new CollectionTables(connection, name);
  if (!tables.migrated()) {
    if (tables.exists()) {
      report(new StoreError(`embedded ${name}: ${file} left alone, the collection already has a table`));
      return;
    }
    const data = await loadDatafile(file, name, report);
    await connection.transaction('write', () => {
      // Another process may have imported it while this one was loading.
      if (tables.migrated() || tables.exists()) return;
      importDatafile(tables, name, data, report);
      tables.recordMigration(file, data.documents.length);
    });
  }
  await rename(file, `${file}.migrated`).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/**
 * Imports every nedb datafile of `directory` not imported yet.
 * @throws StoreError when a datafile cannot be read or imported (the store does not open: its data would be missing)
 */
export async function migrateDatafiles(
  connection: Connection,
  directory: string,
  report: (error: StoreError) => void,
): Promise<void> {
  const files = await readdir(directory);
  const names = files.filter((file) => file.endsWith('.db')).map((file) => file.slice(0, -3));
  for (const name of names.filter(isCollectionName)) {
    try {
      await migrateDatafile(connection, directory, name, report);
    } catch (error) {
      throw new StoreError(`cannot import the nedb datafile of ${name} in ${directory}`, { cause: error });
    }
  }
}

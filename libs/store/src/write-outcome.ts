import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { applyModifiers } from './modify.ts';
import { nedbModel } from './nedb.ts';
import type { NedbDocument, NedbQuery } from './nedb.ts';
import { upsertSeed } from './nedb-query.ts';
import type { ReturnDocument, Sort, UpdateResult } from './types.ts';

/**
 * The engine-independent parts of an embedded write: which modifiers apply
 * to a found document, the document an upsert inserts, and the shape of the
 * results. Both embedded engines build on these, so they agree by
 * construction. Internal to this package.
 */

const { deepCopy } = nedbModel;

/** How updateOne, updateMany and findOneAndUpdate differ. */
export interface ApplyOptions {
  multi: boolean;
  upsert: boolean;
  sort?: Sort | undefined;
}

/** What one update did. */
export interface Outcome {
  /** The documents as they were: no longer stored, so the caller may have them. */
  before: NedbDocument[];
  /** The documents now; an engine that keeps them (nedb) must copy before handing out. */
  after: NedbDocument[];
  matchedCount: number;
  upsertedId: string | null;
}

/** The outcome of an update that matched nothing and inserted nothing. */
export function noMatch(): Outcome {
  return { before: [], after: [], matchedCount: 0, upsertedId: null };
}

/**
 * The modifiers an update applies to a document it found: all but
 * `$setOnInsert`; null when nothing else is left (the document stays as it is).
 */
export function foundModifiers(operators: Record<string, Record<string, unknown>>): NedbQuery | null {
  const { $setOnInsert: _onInsertOnly, ...modifiers } = operators;
  return Object.keys(modifiers).length === 0 ? null : modifiers;
}

/**
 * The document an upsert inserts, built as nedb (and MongoDB) build it: the
 * filter's equalities (and `_id`) as the seed, then `$setOnInsert` merged
 * into `$set` (this is an insert), then the other operators. Its `_id` is
 * the filter's, else `$setOnInsert`'s, else a random UUID.
 */
export function upsertDocument(filter: NedbQuery, operators: Record<string, Record<string, unknown>>): NedbDocument {
  const { _id: seedId, ...seed } = upsertSeed(filter);
  const { $setOnInsert: onInsert = {}, $set: set = {}, ...others } = operators;
  const { _id: onInsertId, ...onInsertFields } = onInsert;
  const id = typeof seedId === 'string' ? seedId : typeof onInsertId === 'string' ? onInsertId : randomUUID();
  // The seed keeps only good field names (a strict copy drops the others, as nedb's upsert does), and the
  // operators' values were checked by `checkUpdate`: the modifiers apply without nedb's walk of the whole result.
  return applyModifiers(
    deepCopy({ _id: id, ...seed }, true),
    { ...others, $set: { ...onInsertFields, ...set } },
    // The seed is this function's own strict copy: it need not be copied again.
    { shared: true },
  );
}

/** The outcome of an upsert that inserted `inserted`. */
export function upsertedOutcome(inserted: NedbDocument | undefined): Outcome {
  const after = inserted === undefined ? [] : [inserted];
  return { before: [], after, matchedCount: 0, upsertedId: inserted?._id ?? null };
}

/**
 * What findOneAndUpdate resolves to: a copy of the document after, or the
 * one before (null when upserted). `ownedAfter`: the document after is the
 * engine's own, held nowhere else (sqlite's are written and dropped), so it
 * is returned without a copy.
 */
export function returnedDocument(
  outcome: Outcome,
  returnDocument: ReturnDocument | undefined,
  ownedAfter = false,
): NedbDocument | null {
  if (returnDocument === 'after') {
    const [after] = outcome.after;
    if (after === undefined) return null;
    return ownedAfter ? after : deepCopy(after);
  }
  return outcome.before[0] ?? null;
}

/**
 * The result of an update. `modifiedCount` compares the documents before and
 * after only when read: both are snapshots (stored documents are replaced,
 * never changed in place), and most callers never ask.
 */
export function toUpdateResult(outcome: Outcome): UpdateResult {
  let modified: number | undefined;
  return {
    matchedCount: outcome.matchedCount,
    get modifiedCount(): number {
      modified ??= outcome.before.filter((document, i) => !isDeepStrictEqual(document, outcome.after[i])).length;
      return modified;
    },
    upsertedCount: outcome.upsertedId === null ? 0 : 1,
    upsertedId: outcome.upsertedId,
  };
}

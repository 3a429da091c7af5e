import { selectMatching } from './cursor.ts';
import type { CursorOptions } from './cursor.ts';
import { idBytes } from './index-keys.ts';
import type { IndexDefinition } from './index-keys.ts';
import { deserializeDocument, nedbModel } from './nedb.ts';
import type { NedbDocument, NedbQuery } from './nedb.ts';
import { chooseWalk, filterConditions, planFilter, planWalk } from './query-plan.ts';
import type { KeyRange, OrderedWalk, Plan } from './query-plan.ts';
import type { CollectionTables, DocumentRow } from './sqlite-tables.ts';

/**
 * Selection in the sqlite engine: plans a filter (see `query-plan.ts`),
 * reads the candidates it gives, parsing each document once, and leaves
 * matching, sorting, skipping and limiting to nedb's cursor semantics
 * (`cursor.ts`), exactly as the nedb engine does. The caller holds a
 * transaction, so every statement sees one snapshot. Internal to this
 * package.
 */

/**
 * When a sort's walk competes with a filter plan that settles more fields,
 * the walk wins once the plan would bring at least this many candidates
 * (each parsed, matched and sorted).
 */
const PROBE_LIMIT = 1_000;

const { match } = nedbModel;

function rowKey(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('latin1');
}

export class Reader {
  readonly #tables: CollectionTables;

  constructor(tables: CollectionTables) {
    this.#tables = tables;
  }

  /**
   * The stored documents matching `query` (the nedb form of `filter`), as
   * nedb's cursor selects them. They are fresh parses: the caller may keep
   * or change them.
   */
  select(
    filter: Record<string, unknown>,
    query: NedbQuery,
    options: CursorOptions,
    indexes: readonly IndexDefinition[],
  ): NedbDocument[] {
    const conditions = filterConditions(filter);
    const plan = planFilter(conditions, indexes);
    const walk = options.sort === undefined ? null : planWalk(options.sort, conditions, indexes);
    if (walk !== null && this.#prefersWalk(plan, walk, options.limit ?? 0)) {
      // The walk yields candidates in the sort's order: select without sorting again, stopping at the limit.
      return selectMatching(this.#walk(walk), query, { ...options, sort: undefined });
    }
    return selectMatching(this.#candidates(plan), query, options);
  }

  /** How many stored documents match; reads them one at a time. */
  count(filter: Record<string, unknown>, query: NedbQuery, indexes: readonly IndexDefinition[]): number {
    if (Object.keys(filter).length === 0) return this.#tables.count();
    let count = 0;
    for (const document of this.#candidates(planFilter(filterConditions(filter), indexes))) {
      if (match(document, query)) count += 1;
    }
    return count;
  }

  #prefersWalk(plan: Plan, walk: OrderedWalk, limit: number): boolean {
    const choice = chooseWalk(plan, walk, limit);
    if (choice !== 'probe' || plan.kind !== 'index') return choice === 'walk';
    let seen = 0;
    for (const range of plan.ranges) {
      seen += this.#tables.countKeys(plan.index.ix, range, PROBE_LIMIT - seen);
      if (seen >= PROBE_LIMIT) return true;
    }
    return false;
  }

  *#walk(walk: OrderedWalk): Generator<NedbDocument> {
    const rows =
      walk.index === null
        ? this.#tables.primaryRange(walk.range, walk.descending)
        : this.#tables.indexRange(walk.index.ix, walk.range, walk.descending);
    for (const row of rows) yield deserializeDocument(row.doc);
  }

  *#candidates(plan: Plan): Generator<NedbDocument> {
    switch (plan.kind) {
      case 'scan':
        yield* parsed(this.#tables.scan());
        return;
      case 'ids':
        // One id (nearly every lookup) needs no Set to come once.
        for (const id of plan.ids.length === 1 ? plan.ids : new Set(plan.ids)) {
          const text = this.#tables.document(idBytes(id));
          if (text !== undefined) yield deserializeDocument(text);
        }
        return;
      case 'primary':
        yield* parsed(this.#tables.primaryRange(plan.range, false));
        return;
      case 'index':
        yield* this.#indexCandidates(plan.index, plan.ranges);
    }
  }

  /** An unordered index may hold several keys of a document: each document comes once. */
  *#indexCandidates(index: IndexDefinition, ranges: readonly KeyRange[]): Generator<NedbDocument> {
    const seen = index.unordered ? new Set<string>() : null;
    for (const range of ranges) {
      for (const row of this.#tables.indexRange(index.ix, range, false)) {
        if (seen !== null) {
          const key = rowKey(row.id);
          if (seen.has(key)) continue;
          seen.add(key);
        }
        yield deserializeDocument(row.doc);
      }
    }
  }
}

function* parsed(rows: Iterable<DocumentRow>): Generator<NedbDocument> {
  for (const row of rows) yield deserializeDocument(row.doc);
}

import { nedbModel } from './nedb.ts';
import type { NedbDocument, NedbQuery } from './nedb.ts';
import type { Sort } from './types.ts';

/**
 * What nedb's cursor does after finding candidates: match, sort, skip,
 * limit and project. Both embedded engines select through these functions
 * (nedb's own model underneath), so they agree by construction whatever
 * their storage. Internal to this package.
 */

/** Sort, skip, limit and projection of one read. */
export interface CursorOptions {
  sort?: Sort | undefined;
  skip?: number | undefined;
  limit?: number | undefined;
  projection?: Record<string, number> | undefined;
}

const { match, modify, compareThings, getDotValue } = nedbModel;

/** nedb's order for `sort`: each field in turn, by `compareThings`, in its direction. */
export function compareBySort(sort: Sort): (a: NedbDocument, b: NedbDocument) => number {
  const criteria = Object.entries(sort);
  return (a, b) => {
    for (const [key, direction] of criteria) {
      const compared = direction * compareThings(getDotValue(a, key), getDotValue(b, key));
      if (compared !== 0) return compared;
    }
    return 0;
  };
}

/**
 * The candidates matching `query`, as nedb's cursor selects them. Without a
 * sort, the first `limit` after `skip` in candidate order, reading no
 * further candidate than needed (an engine may pass candidates already in
 * the sort's order); with one, every match sorted (stably), then skip and
 * limit.
 */
export function selectMatching(
  candidates: Iterable<NedbDocument>,
  query: NedbQuery,
  options: CursorOptions,
): NedbDocument[] {
  const { sort, skip = 0, limit = 0 } = options;
  if (sort === undefined) {
    const out: NedbDocument[] = [];
    let skipped = 0;
    for (const candidate of candidates) {
      if (!match(candidate, query)) continue;
      if (skipped < skip) skipped += 1;
      else {
        out.push(candidate);
        if (limit > 0 && out.length >= limit) break;
      }
    }
    return out;
  }
  const matched: NedbDocument[] = [];
  for (const candidate of candidates) if (match(candidate, query)) matched.push(candidate);
  matched.sort(compareBySort(sort));
  return matched.slice(skip, limit > 0 ? skip + limit : undefined);
}

/** True when `projection` selects or drops anything (an empty one returns whole documents). */
export function hasProjection(projection: Record<string, number> | undefined): projection is Record<string, number> {
  return projection !== undefined && Object.keys(projection).length > 0;
}

/**
 * nedb's cursor projection: `{a: 1, b: 1}` keeps those fields, `{a: 0}`
 * drops them, `_id` is kept unless `_id: 0`. Mixing keeps and drops (other
 * than `_id`) was refused by `checkFindOptions`. The result may share
 * nested values with `document`.
 */
export function project(document: NedbDocument, projection: Record<string, number>): NedbDocument {
  const { _id: idRule, ...rest } = projection;
  const keys = Object.keys(rest);
  let out: Record<string, unknown>;
  if (keys.length > 0 && rest[keys[0] as string] === 1) {
    const picked: Record<string, unknown> = {};
    for (const key of keys) {
      const value = getDotValue(document, key);
      if (value !== undefined) picked[key] = value;
    }
    out = modify({}, { $set: picked });
  } else {
    const dropped: Record<string, true> = {};
    for (const key of keys) dropped[key] = true;
    out = keys.length === 0 ? { ...document } : modify(document, { $unset: dropped });
  }
  if (idRule !== 0) out._id = document._id;
  else delete out._id;
  return out as NedbDocument;
}

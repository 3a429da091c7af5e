import { ServiceError } from '@ars/contracts';
import type { MemoryTier } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Filter, Store } from '@ars/store';
import { checkRecord } from '../domain/memory-record.ts';
import type { MemoryRecord, Owner, RecordAddress } from '../domain/memory-record.ts';
import { literalPattern, pageOf } from '@ars/service-kit';
import type { PageOf } from '@ars/service-kit';

/** Which items a read covers. */
export type MemoryScope =
  /** The caller's own: the tenant tier, its user's tier and its session's tier. */
  | { readonly kind: 'own'; readonly owner: Owner }
  /** Every item of these tenants (fan-in under admin or console:fleet). */
  | { readonly kind: 'tenants'; readonly tenantIds: readonly string[] };

/** Narrowing and paging of a list read. */
export interface MemoryListOptions {
  readonly tier?: MemoryTier | undefined;
  readonly prefix?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** Called for each corrupt record found on load, after it has been deleted. */
export type CorruptRecordHandler = (dropped: {
  readonly id: string;
  readonly reason: string;
  readonly doc: unknown;
}) => Promise<void>;

/** The value of a put. */
export interface MemoryWrite {
  readonly value_json: string;
  readonly size_bytes: number;
  /** Expected current version; 0: must not exist; absent: unconditional. */
  readonly ifVersion?: number | undefined;
  readonly now: string;
}

/**
 * Memory item storage. Every read checks what it loads: a corrupt record is
 * deleted, reported to the handler given at creation, and left out.
 */
export interface MemoryRepository {
  findOne(address: RecordAddress): Promise<MemoryRecord | null>;
  /** Writes and returns the record; a failed compare-and-set is `conflict`. */
  put(address: RecordAddress, write: MemoryWrite): Promise<MemoryRecord>;
  delete(address: RecordAddress): Promise<boolean>;
  /** By key (then id), a page at a time. */
  list(scope: MemoryScope, options: MemoryListOptions): Promise<PageOf<MemoryRecord>>;
  /** Every item of the scope, by key (at most `max`). */
  all(scope: MemoryScope, max: number): Promise<MemoryRecord[]>;
  /** Deletes the session tier of exactly this (tenant, user, session). */
  deleteSession(owner: Owner): Promise<number>;
  /** Checks every stored record once, dropping the corrupt ones; returns how many were dropped. */
  recover(): Promise<number>;
  /** A cheap round trip to the store; throws when it does not answer. */
  probe(): Promise<void>;
}

export const MEMORY_COLLECTION = 'memory_items';

function scopeFilter(scope: MemoryScope): Filter<MemoryRecord> {
  if (scope.kind === 'tenants') return { tenant: { $in: scope.tenantIds } };
  const { tenant, user, session } = scope.owner;
  return {
    $or: [
      { tenant, tier: 'tenant' },
      { tenant, tier: 'user', user },
      { tenant, tier: 'session', user, session },
    ],
  };
}

function listFilter(scope: MemoryScope, options: MemoryListOptions): Filter<MemoryRecord> {
  const parts: Filter<MemoryRecord>[] = [scopeFilter(scope)];
  if (options.tier !== undefined) parts.push({ tier: options.tier });
  if (options.prefix !== undefined) parts.push({ key: { $regex: `^${literalPattern(options.prefix)}` } });
  return parts.length === 1 ? parts[0]! : { $and: parts };
}

function conflict(address: RecordAddress, ifVersion: number): ServiceError {
  const expected = ifVersion === 0 ? 'not to exist' : `to be at version ${ifVersion}`;
  return new ServiceError('conflict', `memory item ${address.tier}/${address.key} was expected ${expected}`);
}

/** The store-backed repository. */
export function createMemoryRepository(
  store: Store,
  onCorrupt: CorruptRecordHandler,
): MemoryRepository & { ensureIndexes(): Promise<void> } {
  const items: Collection<MemoryRecord> = store.collection<MemoryRecord>(MEMORY_COLLECTION);

  /** Keeps the sound records; deletes and reports the rest. */
  async function sound(docs: readonly unknown[]): Promise<MemoryRecord[]> {
    const kept: MemoryRecord[] = [];
    for (const doc of docs) {
      const checked = checkRecord(doc);
      if (checked.ok) {
        kept.push(checked.record);
        continue;
      }
      const id = String((doc as { _id?: unknown })._id);
      await items.deleteOne({ _id: id });
      await onCorrupt({ id, reason: checked.reason, doc });
    }
    return kept;
  }

  async function write(address: RecordAddress, w: MemoryWrite): Promise<MemoryRecord | null> {
    const values = { value_json: w.value_json, size_bytes: w.size_bytes, updated_at: w.now };
    if (w.ifVersion === 0) {
      const { _id, ...where } = address;
      try {
        await items.insertOne({ _id, ...where, ...values, version: 1, created_at: w.now });
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
      return items.findOne({ _id });
    }
    const filter: Filter<MemoryRecord> =
      w.ifVersion === undefined ? { _id: address._id } : { _id: address._id, version: w.ifVersion };
    const { _id: _ignored, ...onInsert } = address;
    return items.findOneAndUpdate(
      filter,
      { $set: values, $inc: { version: 1 }, $setOnInsert: { ...onInsert, created_at: w.now } },
      { upsert: w.ifVersion === undefined, returnDocument: 'after' },
    );
  }

  return {
    async ensureIndexes() {
      await items.createIndex({ tenant: 1, tier: 1, user: 1, session: 1 });
      await items.createIndex({ key: 1 });
    },
    async findOne(address) {
      const doc = await items.findOne({ _id: address._id });
      return doc === null ? null : ((await sound([doc]))[0] ?? null);
    },
    async put(address, w) {
      const stored = await write(address, w);
      if (stored === null) throw conflict(address, w.ifVersion ?? 0);
      return stored;
    },
    async delete(address) {
      return (await items.deleteOne({ _id: address._id })).deletedCount > 0;
    },
    async list(scope, options) {
      const page = await pageOf(items, listFilter(scope, options), {
        sortField: 'key',
        direction: 'asc',
        limit: options.limit,
        after: options.cursor,
      });
      const kept = await sound(page.items);
      return page.next_cursor === undefined ? { items: kept } : { items: kept, next_cursor: page.next_cursor };
    },
    async all(scope, max) {
      return sound(await items.find(scopeFilter(scope), { sort: { key: 1, _id: 1 }, limit: max }));
    },
    async deleteSession(owner) {
      const { tenant, user, session } = owner;
      return (await items.deleteMany({ tenant, user, session, tier: 'session' })).deletedCount;
    },
    async recover() {
      let dropped = 0;
      let after: string | undefined;
      for (;;) {
        const batch = await items.find(after === undefined ? {} : { _id: { $gt: after } }, {
          sort: { _id: 1 },
          limit: 500,
        });
        if (batch.length === 0) return dropped;
        dropped += batch.length - (await sound(batch)).length;
        after = String(batch.at(-1)!._id);
      }
    },
    async probe() {
      await items.countDocuments({ _id: '__probe__' });
    },
  };
}

import { randomBytes } from 'node:crypto';
import type { Collection, Store } from '@ars/store';
import type { Owner } from '../domain/memory-record.ts';
import { pageOf } from '@ars/service-kit';
import type { PageOf } from '@ars/service-kit';

/** One recorded strategy decision of a run (what `_memory.prompt_blocks` admitted or dropped). */
export interface TraceRecord {
  /** `<run>:<15-digit stamp>.<random>:<4-digit index>`: sorts in recording order within a run. */
  _id: string;
  run: string;
  tenant: string;
  user: string;
  session: string;
  occurred_at: string;
  strategy: string;
  tier: string;
  key: string;
  action: string;
  bytes: number;
  reason: string;
}

/** The fields of a trace entry, without where and when it was recorded. */
export type TraceEntryFields = Pick<TraceRecord, 'strategy' | 'tier' | 'key' | 'action' | 'bytes' | 'reason'>;

/** Recorded strategy traces, per run. */
export interface TraceRepository {
  record(run: string, owner: Owner, at: Date, entries: readonly TraceEntryFields[]): Promise<void>;
  /** The run's entries in recording order, if the run is the (tenant, user)'s. */
  page(
    run: string,
    owner: Pick<Owner, 'tenant' | 'user'>,
    limit: number,
    cursor?: string,
  ): Promise<PageOf<TraceRecord>>;
  deleteSession(owner: Owner): Promise<number>;
}

export const TRACES_COLLECTION = 'strategy_traces';

/** The store-backed repository. */
export function createTraceRepository(store: Store): TraceRepository & { ensureIndexes(): Promise<void> } {
  const traces: Collection<TraceRecord> = store.collection<TraceRecord>(TRACES_COLLECTION);
  // Strictly increasing per process, so two recordings in one millisecond keep their order.
  let lastStamp = 0;
  return {
    async ensureIndexes() {
      await traces.createIndex({ run: 1 });
      await traces.createIndex({ tenant: 1, user: 1, session: 1 });
    },
    async record(run, owner, at, entries) {
      if (entries.length === 0) return;
      lastStamp = Math.max(at.getTime(), lastStamp + 1);
      const stamp = `${String(lastStamp).padStart(15, '0')}.${randomBytes(3).toString('hex')}`;
      const { tenant, user, session } = owner;
      await traces.insertMany(
        entries.map((entry, index) => ({
          _id: `${run}:${stamp}:${String(index).padStart(4, '0')}`,
          run,
          tenant,
          user,
          session,
          occurred_at: at.toISOString(),
          ...entry,
        })),
      );
    },
    page: (run, owner, limit, cursor) =>
      pageOf(
        traces,
        { run, tenant: owner.tenant, user: owner.user },
        {
          sortField: '_id',
          direction: 'asc',
          limit,
          after: cursor,
        },
      ),
    async deleteSession(owner) {
      const { tenant, user, session } = owner;
      return (await traces.deleteMany({ tenant, user, session })).deletedCount;
    },
  };
}

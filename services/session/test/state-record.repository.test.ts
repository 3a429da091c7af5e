import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { taskStateRecord, turnRecord } from '../src/domain/state-records.ts';
import type { StateRecordInput } from '../src/domain/state-records.ts';
import { createStateRecordRepository } from '../src/store/state-record.repository.ts';
import type { StateRecordRepository } from '../src/store/state-record.repository.ts';

const triple = { tenant: 't', user: 'u', session: 's' };
const spawn: StateRecordInput = { triple, streamSequence: 7, occurredAt: '2026-11-28T04:00:00.000Z', taskId: 'run-1' };

describe('state record repository (embedded, in memory)', () => {
  let store: Store;
  let records: StateRecordRepository;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'state_record_test', inMemory: true });
    records = createStateRecordRepository(store);
    await records.ensureIndexes();
  });

  afterEach(async () => {
    await store.close();
  });

  const kinds = async () =>
    (await records.page({ triple, limit: 10 })).items.map((record) => [record._id, record.kind, record.content]);

  it("inserts a spawn's turn and task state together, in the history's order", async () => {
    await records.insertAll([turnRecord(spawn, 'hello'), taskStateRecord(spawn, 'pending')]);
    expect(await kinds()).toEqual([
      ['7:turn', 'turn', 'hello'],
      ['7:task_state', 'task_state', undefined],
    ]);
  });

  it('inserts what a redelivery still lacks and keeps what was there, whichever of them was there', async () => {
    // A crash between the two inserts of an earlier version left the turn alone.
    await records.insert(turnRecord(spawn, 'hello'));
    await records.insertAll([turnRecord(spawn, 'read again'), taskStateRecord(spawn, 'pending')]);
    expect(await kinds()).toEqual([
      ['7:turn', 'turn', 'hello'],
      ['7:task_state', 'task_state', undefined],
    ]);
    // Both there: nothing changes, nothing throws.
    await records.insertAll([turnRecord(spawn, 'again'), taskStateRecord(spawn, 'pending')]);
    await records.insertAll([taskStateRecord(spawn, 'pending')]);
    expect(await records.count(triple)).toBe(2);
  });
});

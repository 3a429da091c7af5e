import { randomUUID } from 'node:crypto';
import type { VerifiedIdentity } from '@ars/contracts';
import type { PauseRecord } from '../../src/domain/pause.ts';
import { newTaskRecord } from '../../src/domain/start.ts';
import type { TaskRecord } from '../../src/domain/task.ts';
import type { Harness } from './harness.ts';

/** Inserts a task the way start would, without events (reads only look at the store). */
export async function seedTask(
  h: Harness,
  caller: VerifiedIdentity,
  overrides: Partial<TaskRecord> = {},
): Promise<TaskRecord> {
  const taskId = randomUUID();
  const record = {
    ...newTaskRecord({
      taskId,
      triple: caller,
      request: { identity: {}, query: overrides.query ?? 'seeded query' },
      agent: {},
      artifacts: [],
      now: overrides.created_at ?? new Date().toISOString(),
    }),
    ...overrides,
  };
  await h.tasks.insertTask(record);
  return record;
}

/** An open approval pause of `taskId` in the caller's triple, as the engine writes it. */
export function pauseRecord(
  caller: VerifiedIdentity,
  taskId: string,
  overrides: Partial<PauseRecord> = {},
): PauseRecord {
  const token = randomUUID();
  return {
    _id: token,
    token,
    task_id: taskId,
    tenant: caller.tenant,
    user: caller.user,
    session: caller.session,
    reason: 'approval needed',
    kind: 'approval',
    tool: 'wire_money',
    tags: ['finance'],
    args_summary: { amount: 10 },
    requested_at: new Date().toISOString(),
    ...overrides,
  };
}

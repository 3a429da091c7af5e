import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { startWatched } from './support/runs.ts';

/**
 * Task groups and background runs over the public API (HTTP and SSE through
 * the gateway). `start` has no background member: a run becomes background
 * work when a run fans it out in a group that does not retain the turn
 * (`spawn_group` with `retain_turn: false`). The owner's turn ends first;
 * the members complete in the background (`task.completed` NotifyOnComplete
 * true), the group resolves, and the session's next run acknowledges each
 * member's completion (`task.background_acknowledged`, `background_acknowledged`
 * on the task).
 */

interface TaskView {
  readonly kind: string;
  readonly status: string;
  readonly background_acknowledged: boolean;
}

const payloadOf = (frame: EventFrame) => frame.payload as Record<string, unknown>;

describe('task groups end to end', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem({ mode: 'one-process' });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function newClient(): Promise<ArsClient> {
    const token = await mintToken(sys.baseUrl, { ...uniqueIdentity('groups'), scopes: [] });
    return sys.client({ token });
  }

  const taskOf = async (client: ArsClient, taskId: string) =>
    (await client.call<{ task: TaskView }>('tasks.get', { identity: {}, task_id: taskId })).task;

  /** Runs one more turn of the session; returns its events. */
  async function nextTurn(client: ArsClient): Promise<EventFrame[]> {
    const run = await startWatched(client, { query: '#script finish:ok' });
    try {
      expect((await run.log.terminal()).type).toBe('task.completed');
      return run.log.frames;
    } finally {
      await run.log.close();
    }
  }

  it("runs a group without retaining the owner's turn, as background tasks the next turn acknowledges", async () => {
    const client = await newClient();
    // Ending apart: two runs of one session ending at the same moment can lose one's turn (the run-executor
    // appends a session's turns read-modify-write, a known limitation).
    const tasks = [300, 900].map((ms, i) => ({
      query: `#script tool:wait{"ms":${ms}};finish:${['alpha', 'beta'][i]}`,
    }));
    const spawn = JSON.stringify({ tasks, retain_turn: false, description: 'fan out' });
    const owner = await startWatched(client, { query: `#script tool:spawn_group${spawn};finish:owner done` });
    let members: string[];
    try {
      const ended = await owner.log.terminal({ timeoutMs: 20_000 });
      expect(ended.type).toBe('task.completed');
      const resolved = await owner.log.next('task.group_resolved', undefined, { timeoutMs: 20_000 });
      // The owner did not wait on its group: its turn ended before the group resolved.
      expect(resolved.sequence).toBeGreaterThan(ended.sequence);
      const created = await owner.log.next('task.group_created');
      expect(payloadOf(created)).toMatchObject({ OwnerTaskID: owner.taskId, RetainTurn: false, FailFast: false });
      members = payloadOf(await owner.log.next('task.group_sealed')).Members as string[];
      const completion = payloadOf(resolved).Completion as { Members: { TaskID: string; Answer: string }[] };
      expect(completion.Members).toEqual([
        { TaskID: members[0], Status: 'complete', Answer: 'alpha', ErrorCode: '' },
        { TaskID: members[1], Status: 'complete', Answer: 'beta', ErrorCode: '' },
      ]);
    } finally {
      await owner.log.close();
    }
    for (const member of members) {
      expect(await taskOf(client, member)).toMatchObject({
        kind: 'background',
        status: 'complete',
        background_acknowledged: false,
      });
    }
    const acknowledged = (await nextTurn(client)).filter((f) => f.type === 'task.background_acknowledged');
    expect(acknowledged.map((f) => payloadOf(f).TaskID).sort()).toEqual([...members].sort());
    for (const member of members) expect((await taskOf(client, member)).background_acknowledged).toBe(true);
    // Acknowledged once: the turn after that has nothing left to acknowledge.
    expect((await nextTurn(client)).filter((f) => f.type === 'task.background_acknowledged')).toEqual([]);
  });

  it('keeps the turn of a run that retains it: the group resolves before the owner ends', async () => {
    const client = await newClient();
    const spawn = JSON.stringify({ tasks: [{ query: '#script finish:inner' }] });
    const owner = await startWatched(client, { query: `#script tool:spawn_group${spawn};finish:owner done` });
    try {
      const ended = await owner.log.terminal({ timeoutMs: 20_000 });
      expect(ended.type).toBe('task.completed');
      const resolved = await owner.log.next('task.group_resolved');
      expect(resolved.sequence).toBeLessThan(ended.sequence);
      const members = payloadOf(await owner.log.next('task.group_sealed')).Members as string[];
      expect(await taskOf(client, members[0] as string)).toMatchObject({ kind: 'foreground', status: 'complete' });
    } finally {
      await owner.log.close();
    }
  });
});

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame, FlowRunDescription, FlowRunResponse } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { EventLog, isTerminal } from './support/event-log.ts';
import { barrierRun, storedEvents, storedRunEvents, streamCursor } from './support/runs.ts';

/**
 * A 3-step flow with a fan-out of three, its run-executor killed with
 * SIGKILL while the three branches run and started again: the flow resumes
 * from its recorded steps and completes once, no step runs twice, and every
 * child is spawned, started and ended exactly once. Split mode, so the
 * executor is a process of its own; short ack-wait and lease times let the
 * killed executor's runs be redelivered within seconds.
 */

const FAST_REDELIVERY = { EXECUTOR_ACK_WAIT_MS: '3000', EXECUTOR_LEASE_TTL_MS: '3000' };

const FLOW = {
  name: 'Fan of three, slow branches',
  steps: [
    { id: 'plan', type: 'run', query: '#script finish:plan' },
    {
      id: 'fan',
      type: 'parallel',
      branches: ['x', 'y', 'z'].map((part) => ({ query: `#script tool:wait{"ms":2500};finish:${part}` })),
    },
    {
      id: 'merge',
      type: 'run',
      query:
        '#script finish:{{steps.plan.answer}} {{steps.fan.answers.0}}{{steps.fan.answers.1}}{{steps.fan.answers.2}}',
    },
  ],
};

const count = (frames: readonly EventFrame[], type: string) => frames.filter((f) => f.type === type).length;

describe('a flow across SIGKILL of its run-executor', () => {
  let sys: TestSystem;
  let dir: string;
  let admin: ArsClient;
  const identity: TestIdentity = uniqueIdentity('flowkill');
  let started: FlowRunResponse;
  let parentEvents: EventFrame[];
  let described: FlowRunDescription;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-e2e-flows-kill-'));
    await mkdir(join(dir, identity.tenant));
    await writeFile(join(dir, identity.tenant, 'slowfan.json'), JSON.stringify(FLOW));
    sys = await startTestSystem({ env: { ...FAST_REDELIVERY, FLOWS_DIR: dir } });
    admin = sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes: ['admin'] }) });

    const cursor = await streamCursor(admin);
    started = await admin.call<FlowRunResponse>('flows.run', { identity: {}, flow_id: 'slowfan' });
    const parent = started.task_id ?? '';
    // The session's stream: the branches' tool calls show that the fan-out runs.
    const session = new EventLog(admin, { lastEventId: cursor });
    try {
      let waits = 0;
      await session.next('tool.invoked', (f) => f.payload['ToolName'] === 'wait' && ++waits === 3, {
        timeoutMs: 30_000,
      });
    } finally {
      await session.close();
    }
    const exit = await sys.system.killService('run-executor', 'SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    await sys.system.startServiceProcess('run-executor');

    const log = new EventLog(admin, { run: parent, lastEventId: cursor });
    try {
      await log.terminal({ timeoutMs: 60_000 });
    } finally {
      await log.close();
    }
    await barrierRun(admin);
    parentEvents = await storedRunEvents(admin, parent);
    described = await admin.call<FlowRunDescription>('flows.runs.describe', { identity: {}, run_id: started.run_id });
  }, 120_000);

  afterAll(async () => {
    await sys?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('completes the flow once, with the answer of every step', () => {
    expect(parentEvents.filter(isTerminal).map((f) => f.type)).toEqual(['task.completed']);
    expect(described.run).toMatchObject({ status: 'complete', answer: 'plan xyz' });
    expect(described.steps?.map((s) => [s.step_id, s.status, s.child_task_ids.length])).toEqual([
      ['plan', 'completed', 1],
      ['fan', 'completed', 3],
      ['merge', 'completed', 1],
    ]);
  });

  it('spawns, starts and ends each child exactly once: no completed step runs again', async () => {
    const children = described.steps?.flatMap((s) => s.child_task_ids) ?? [];
    expect(new Set(children).size).toBe(5);
    for (const child of children) {
      const frames = await storedRunEvents(admin, child);
      expect([child, count(frames, 'task.spawned'), count(frames, 'task.started')]).toEqual([child, 1, 1]);
      expect(frames.filter(isTerminal).map((f) => f.type)).toEqual(['task.completed']);
    }
    // The whole session holds no other child: nothing was spawned twice under another id.
    const spawned = (await storedEvents(admin, { types: ['task.spawned'] })).filter(
      (f) => f.payload['ParentTaskID'] === started.task_id,
    );
    expect(spawned.map((f) => f.payload['TaskID']).sort()).toEqual([...children].sort());
  });
});

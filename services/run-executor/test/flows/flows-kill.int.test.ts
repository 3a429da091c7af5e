import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventFrame, FlowRunDescription, FlowRunResponse, VerifiedIdentity } from '@ars/contracts';
import { connectBus, createRpcClient, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcClient, ServedService } from '@ars/bus';
import { storedEvents } from '@ars/service-kit/testing';
import { newCaller, serveEngineFakes, serveGovernanceFake, TERMINAL_TYPES, watchRun } from '../engine/harness.ts';
import { executorProcesses } from '../helpers/executor-processes.ts';
import type { ExecutorProcesses } from '../helpers/executor-processes.ts';

/**
 * A flow across a real `kill -9` of its executor: executors run as
 * processes on one nats-server and one data directory; the one driving a
 * 3-step flow (a run, a fan-out of three, a run joining them) is SIGKILLed
 * while the fan-out's children wait, and another takes over. The flow
 * completes; no completed step runs again and every child runs once.
 */

const FLOW = {
  name: 'Durable',
  steps: [
    { id: 'prep', type: 'run', query: '#script tool:side_effect{};finish:prepared' },
    {
      id: 'fan',
      type: 'parallel',
      branches: ['a', 'b', 'c'].map((x) => ({ query: `#script tool:side_effect{};tool:wait{"ms":1500};finish:${x}` })),
    },
    { id: 'join', type: 'run', query: '#script finish:{{steps.prep.answer}}+{{steps.fan.answer}}' },
  ],
};

const countOf = (events: readonly EventFrame[], run: string, type: string) =>
  events.filter((e) => e.run === run && e.type === type).length;

describe('a flow across kill -9 of its executor', { timeout: 90_000 }, () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let rpc: RpcClient;
  let fakes: ServedService[];
  let executors: ExecutorProcesses;
  const caller: VerifiedIdentity = newCaller({ scopes: ['admin'] });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-flow-kill-'));
    await mkdir(join(dir, 'flows', caller.tenant), { recursive: true });
    await writeFile(join(dir, 'flows', caller.tenant, 'durable.json'), JSON.stringify(FLOW));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
    bus = await connectBus({ servers: nats.url, name: 'flow-kill-test' });
    rpc = createRpcClient(bus, { timeoutMs: 5_000 });
    executors = executorProcesses(rpc, {
      natsUrl: nats.url,
      dataDir: join(dir, 'data'),
      env: { FLOWS_DIR: join(dir, 'flows') },
    });
    fakes = await serveEngineFakes(bus, new Map());
    fakes.push((await serveGovernanceFake(bus)).served);
  });

  afterEach(async () => {
    await executors.stop();
    await Promise.all(fakes.map((f) => f.stop().catch(() => undefined)));
    await bus.close();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function untilStored(done: (events: EventFrame[]) => boolean, timeoutMs = 20_000): Promise<EventFrame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await storedEvents(bus, { tenant: caller.tenant, user: caller.user, session: caller.session });
      if (done(events)) return events;
      if (Date.now() > deadline) throw new Error(`not stored in time; saw ${events.map((e) => e.type).join(', ')}`);
      await sleep(50);
    }
  }

  it('resumes the flow in its fan-out: no step runs twice, the flow completes once', async () => {
    const first = await executors.start();
    const started = (await rpc.call('run-executor', 'flows.run', caller, {
      identity: {},
      flow_id: 'durable',
    })) as FlowRunResponse;
    const parent = started.task_id ?? '';
    const watch = await watchRun(bus, caller, parent);
    const waiting = (events: EventFrame[]) =>
      events.filter((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait').length === 3;
    const before = await untilStored(waiting);
    expect(before.filter((e) => e.run === parent && TERMINAL_TYPES.includes(e.type))).toEqual([]);
    await executors.crashOver(first);
    expect((await watch.terminal(30_000)).type).toBe('task.completed');
    watch.stop();

    const events = await untilStored((all) => all.filter((e) => TERMINAL_TYPES.includes(e.type)).length === 6);
    const children = events.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === parent);
    expect(children).toHaveLength(5);
    for (const run of [parent, ...children.map((e) => e.run)]) {
      expect.soft(countOf(events, run, 'task.started'), `task.started of ${run}`).toBe(1);
      const terminal = events.filter((e) => e.run === run && TERMINAL_TYPES.includes(e.type));
      expect(terminal.map((e) => e.type)).toEqual(['task.completed']);
    }
    // Each side effect happened once: the first step's child was not run again, nor were the branches' effects.
    const effects = events.filter((e) => e.type === 'tool.completed' && e.payload.ToolName === 'side_effect');
    expect(effects).toHaveLength(4);
    expect(new Set(effects.map((e) => e.run)).size).toBe(4);

    const { run, steps } = (await rpc.call('run-executor', 'flows.runs.describe', caller, {
      identity: {},
      run_id: started.run_id,
    })) as FlowRunDescription;
    expect(steps?.map((s) => [s.step_id, s.status, s.child_task_ids.length])).toEqual([
      ['prep', 'completed', 1],
      ['fan', 'completed', 3],
      ['join', 'completed', 1],
    ]);
    expect(run).toMatchObject({ status: 'complete', answer: 'prepared+a\n\nb\n\nc' });
  });
});

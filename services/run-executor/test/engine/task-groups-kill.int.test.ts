import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { connectBus, createRpcClient, decodeStoredEvent, eventFilterSubject, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcClient, ServedService } from '@ars/bus';
import { storedEvents } from '@ars/service-kit/testing';
import { executorProcesses } from '../helpers/executor-processes.ts';
import type { ExecutorProcesses } from '../helpers/executor-processes.ts';
import { newCaller, serveEngineFakes, serveGovernanceFake, TERMINAL_TYPES, watchRun } from './harness.ts';

/**
 * Task groups across a real `kill -9`: executors run as processes
 * (`node services/run-executor/src/main.ts`) on one nats-server and one data
 * directory; the one running a group's owner (and its children) is SIGKILLed
 * while the owner waits on children in flight, or while it is spawning them,
 * and another takes over. Every child runs once, the group resolves once,
 * the owner ends once: counted on the stored stream, per run and type.
 */

/** Events a run has at most once, however often it was claimed. */
const ONCE = ['task.spawned', 'task.started', ...TERMINAL_TYPES];
const GROUP_EVENTS = ['task.group_created', 'task.group_sealed', 'task.group_resolved', 'task.group_cancelled'];

const countOf = (events: readonly EventFrame[], run: string, type: string) =>
  events.filter((e) => e.run === run && e.type === type).length;

describe('task groups across kill -9 of their executor', { timeout: 90_000 }, () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let rpc: RpcClient;
  let fakes: ServedService[];
  let executors: ExecutorProcesses;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-group-kill-'));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
    bus = await connectBus({ servers: nats.url, name: 'group-kill-test' });
    rpc = createRpcClient(bus, { timeoutMs: 5_000 });
    executors = executorProcesses(rpc, { natsUrl: nats.url, dataDir: join(dir, 'data') });
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

  const sessionEvents = (caller: VerifiedIdentity) =>
    storedEvents(bus, { tenant: caller.tenant, user: caller.user, session: caller.session });

  /** Reads the session's stored events until `done` holds of them. */
  async function untilStored(
    caller: VerifiedIdentity,
    done: (events: EventFrame[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<EventFrame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await sessionEvents(caller);
      if (done(events)) return events;
      if (Date.now() > deadline) throw new Error(`not stored in time; saw ${events.map((e) => e.type).join(', ')}`);
      await sleep(50);
    }
  }

  async function startOwner(caller: VerifiedIdentity, tasks: readonly { query: string }[]) {
    const query = `#script tool:spawn_group${JSON.stringify({ tasks })};finish:owner done`;
    const { task_id: taskId } = (await rpc.call('run-executor', 'start', caller, { identity: {}, query })) as {
      task_id: string;
    };
    return { taskId, watch: await watchRun(bus, caller, taskId) };
  }

  /** The checks of a group that came through: each child once, the group once, the owner once. */
  function expectExactlyOnce(events: readonly EventFrame[], ownerId: string, answers: readonly string[]): void {
    const children = events.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === ownerId);
    expect(children).toHaveLength(answers.length);
    for (const run of [ownerId, ...children.map((e) => e.run)]) {
      for (const type of ONCE) expect.soft(countOf(events, run, type), `${type} of ${run}`).toBeLessThanOrEqual(1);
      const terminal = events.filter((e) => e.run === run && TERMINAL_TYPES.includes(e.type));
      expect(terminal.map((e) => e.type)).toEqual(['task.completed']);
    }
    expect(GROUP_EVENTS.map((type) => countOf(events, ownerId, type))).toEqual([1, 1, 1, 0]);
    const resolved = events.find((e) => e.type === 'task.group_resolved')?.payload.Completion as {
      Members: { TaskID: string; Status: string; Answer: string }[];
    };
    expect(resolved.Members.map((m) => m.Answer)).toEqual(answers);
    expect(new Set(resolved.Members.map((m) => m.TaskID))).toEqual(new Set(children.map((e) => e.run)));
  }

  it('resumes an owner waiting on children in flight: each child runs once, the group resolves once', async () => {
    const first = await executors.start();
    const caller = newCaller();
    const answers = ['one', 'two', 'three'];
    const tasks = answers.map((a) => ({ query: `#script tool:side_effect{};tool:wait{"ms":1500};finish:${a}` }));
    const { taskId, watch } = await startOwner(caller, tasks);
    // Every child is in its wait (its side effect done and checkpointed) and the owner waits on them.
    const waiting = (events: EventFrame[]) =>
      events.filter((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait').length === tasks.length;
    const before = await untilStored(caller, waiting);
    expect(countOf(before, taskId, 'task.group_sealed')).toBe(1);
    expect(before.filter((e) => TERMINAL_TYPES.includes(e.type))).toEqual([]);
    await executors.crashOver(first);
    expect((await watch.terminal(30_000)).type).toBe('task.completed');
    watch.stop();
    const events = await untilStored(caller, (all) => all.filter((e) => TERMINAL_TYPES.includes(e.type)).length === 4);
    expectExactlyOnce(events, taskId, answers);
    const sideEffects = events.filter((e) => e.type === 'tool.completed' && e.payload.ToolName === 'side_effect');
    expect(sideEffects.map((e) => e.run).sort()).toEqual(
      events
        .filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === taskId)
        .map((e) => e.run)
        .sort(),
    );
    // The owner's call was made again by the second executor and found its group.
    expect(countOf(events, taskId, 'tool.invoked')).toBe(2);
  });

  it('resumes an owner killed while spawning its children: none is spawned twice', async () => {
    const first = await executors.start();
    const caller = newCaller();
    const answers = Array.from({ length: 16 }, (_, i) => `m${i}`);
    const tasks = answers.map((a) => ({ query: `#script finish:${a}` }));
    // SIGKILL as the first child's task.spawned passes through the server, before the owner spawned the rest.
    const subscription = bus.nc.subscribe(eventFilterSubject(caller), {
      callback: (_error, msg) => {
        const event = decodeStoredEvent(msg.data);
        if (event.type === 'task.spawned' && event.payload.ParentTaskID !== '') first.child.kill('SIGKILL');
      },
    });
    await bus.nc.flush();
    const { taskId, watch } = await startOwner(caller, tasks);
    await first.exited;
    subscription.unsubscribe();
    const atKill = await sessionEvents(caller);
    const spawnedAtKill = atKill.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === taskId).length;
    expect(spawnedAtKill).toBeGreaterThan(0);
    expect(spawnedAtKill).toBeLessThan(tasks.length);
    expect(countOf(atKill, taskId, 'task.group_sealed')).toBe(0);
    await executors.start();
    expect((await watch.terminal(30_000)).type).toBe('task.completed');
    watch.stop();
    const events = await untilStored(
      caller,
      (all) => all.filter((e) => TERMINAL_TYPES.includes(e.type)).length === tasks.length + 1,
    );
    expectExactlyOnce(events, taskId, answers);
  });
});

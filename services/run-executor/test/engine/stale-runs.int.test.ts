import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  connectBus,
  createEventPublisher,
  ensureInfrastructure,
  EVENTS_STREAM,
  RUNS_STREAM,
  startNatsServer,
  storedEventIdAt,
} from '@ars/bus';
import type { Bus, EventPublisher, NatsServerHandle } from '@ars/bus';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { newTaskRecord, spawnedEventId } from '../../src/domain/start.ts';
import type { TaskRecord } from '../../src/domain/task.ts';
import { announceRun } from '../../src/engine/announce.ts';
import { createStaleRunSweeper, requeueMessageId } from '../../src/engine/stale-runs.ts';
import { createWorkQueue } from '../../src/engine/work-queue.ts';
import type { WorkQueue } from '../../src/engine/work-queue.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';

/**
 * The stale-run sweeper against a real nats-server and the embedded store:
 * a pending run whose queue message (and `task.spawned`) a failover lost is
 * queued again once, after two passes agree, and only while no backlog may
 * explain its wait.
 */

const STALE_MS = 60_000;
const logger = createLogger({ name: 'stale-runs-test', level: 'silent' });

describe('stale-run sweeper', () => {
  let dir: string;
  let server: NatsServerHandle;
  let bus: Bus;
  let store: Store;
  let tasks: TaskRepository;
  let publisher: EventPublisher;
  let queue: WorkQueue;
  let clock = Date.now();
  let counter = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-stale-runs-'));
    server = await startNatsServer({ storeDir: join(dir, 'nats') });
    bus = await connectBus({ servers: server.url, name: 'stale-runs-test' });
    await ensureInfrastructure(bus);
    store = await openStore({ dataDir: dir, database: 'stale_runs', engine: 'sqlite' });
    tasks = await createTaskRepository(store);
    publisher = createEventPublisher(bus, { source: 'run-executor', logger });
    queue = createWorkQueue(bus, { ackWaitMs: 30_000 });
    await queue.ensureConsumers();
  });

  afterAll(async () => {
    queue?.close();
    await bus?.close();
    await store?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    // Every test starts with an empty queue and no task left pending by another.
    await bus.jsm.streams.purge(RUNS_STREAM);
    for (const task of await tasks.listQueuedBefore(new Date(Date.now() + 3_600_000).toISOString(), 1_000)) {
      await tasks.markTerminal(task.task_id, 'cancelled');
    }
    clock = Date.now();
  });

  function sweeper() {
    return createStaleRunSweeper({
      deps: { bus, publisher, tasks },
      queue,
      logger,
      staleAfterMs: STALE_MS,
      now: () => clock,
    });
  }

  async function pendingTask(priority = 0): Promise<TaskRecord> {
    counter += 1;
    const record = newTaskRecord({
      taskId: `stale-${counter}-${Date.now()}`,
      triple: { tenant: 't1', user: 'u1', session: `s${counter}` },
      request: { identity: {}, query: 'q', priority } as never,
      agent: {},
      artifacts: [],
      now: new Date(clock).toISOString(),
    });
    const { task } = await tasks.insertTask(record);
    return task;
  }

  /** Messages on RUNS, with their message ids. */
  async function runsMessages(): Promise<{ taskId: string; msgId: string | undefined }[]> {
    const info = await bus.jsm.streams.info(RUNS_STREAM);
    const found: { taskId: string; msgId: string | undefined }[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await bus.jsm.streams.getMessage(RUNS_STREAM, { seq });
      if (message === null) continue;
      const body = JSON.parse(new TextDecoder().decode(message.data)) as { task_id: string };
      found.push({ taskId: body.task_id, msgId: message.header?.get('Nats-Msg-Id') || undefined });
    }
    return found;
  }

  it('queues a lost run again after two passes agree, and publishes its lost task.spawned again', async () => {
    const task = await pendingTask();
    // As after a failover: the task's recorded spawned sequence holds no message, and RUNS holds nothing.
    const bounds = await bus.jsm.streams.info(EVENTS_STREAM);
    await tasks.setSpawnedSequence(task.task_id, bounds.state.last_seq + 1_000);
    const sweep = sweeper();

    expect(await sweep.sweep()).toBe(0); // not stale yet
    clock += STALE_MS + 1;
    expect(await sweep.sweep()).toBe(0); // a suspect: one pass alone never acts
    expect(await runsMessages()).toEqual([]);
    clock += STALE_MS / 4;
    expect(await sweep.sweep()).toBe(1);

    expect(await runsMessages()).toEqual([{ taskId: task.task_id, msgId: requeueMessageId(task.task_id, 1) }]);
    const stored = await tasks.getTask(task.task_id);
    expect(stored?.status).toBe('pending');
    expect(stored?.requeues).toBe(1);
    expect(stored?.spawned_sequence).toBeLessThanOrEqual((await bus.jsm.streams.info(EVENTS_STREAM)).state.last_seq);
    expect(await storedEventIdAt(bus, stored!.spawned_sequence!)).toBe(spawnedEventId(task.task_id));
    // Queued again just now: not a suspect until it has waited the whole bound again.
    expect(await sweep.sweep()).toBe(0);
  });

  it('leaves task.spawned alone when the stream still holds it, and queues only the run', async () => {
    const task = await pendingTask();
    await announceRun({ bus, publisher, tasks }, task);
    const spawnedAt = (await tasks.getTask(task.task_id))?.spawned_sequence;
    await bus.jsm.streams.purge(RUNS_STREAM); // the queue message alone is lost
    const sweep = sweeper();
    clock += STALE_MS + 1;
    await sweep.sweep();
    clock += STALE_MS / 4;
    expect(await sweep.sweep()).toBe(1);
    expect((await tasks.getTask(task.task_id))?.spawned_sequence).toBe(spawnedAt);
    expect((await runsMessages()).map((m) => m.taskId)).toEqual([task.task_id]);
  });

  it('waits while the queue holds undelivered runs: an old pending run may only be waiting its turn', async () => {
    const task = await pendingTask();
    const waiting = await pendingTask();
    await announceRun({ bus, publisher, tasks }, waiting); // undelivered: nobody pulls
    const sweep = sweeper();
    clock += STALE_MS + 1;
    expect(await sweep.sweep()).toBe(0);
    clock += STALE_MS / 4;
    expect(await sweep.sweep()).toBe(0);
    expect((await runsMessages()).map((m) => m.taskId)).toEqual([waiting.task_id]);
    expect((await tasks.getTask(task.task_id))?.requeues).toBeUndefined();
  });

  it('never queues a run claimed between two passes', async () => {
    const task = await pendingTask();
    const sweep = sweeper();
    clock += STALE_MS + 1;
    await sweep.sweep();
    expect(await tasks.markRunning(task.task_id)).toBe('pending');
    clock += STALE_MS / 4;
    expect(await sweep.sweep()).toBe(0);
    expect(await runsMessages()).toEqual([]);
    expect((await tasks.getTask(task.task_id))?.queued_at).toBeUndefined();
  });

  it('queues a lost run once when every executor sweeps at once', async () => {
    const task = await pendingTask();
    await tasks.setSpawnedSequence(task.task_id, (await announceSpawnedOnly(task)) ?? 0);
    const sweepers = [sweeper(), sweeper(), sweeper()];
    clock += STALE_MS + 1;
    await Promise.all(sweepers.map((s) => s.sweep()));
    clock += STALE_MS / 4;
    const requeued = await Promise.all(sweepers.map((s) => s.sweep()));
    expect(requeued.reduce((a, b) => a + b, 0)).toBe(1);
    expect((await runsMessages()).map((m) => m.msgId)).toEqual([requeueMessageId(task.task_id, 1)]);
  });

  it('queues a run on the bucket of its current priority', async () => {
    const task = await pendingTask(5);
    const sweep = sweeper();
    clock += STALE_MS + 1;
    await sweep.sweep();
    clock += STALE_MS / 4;
    expect(await sweep.sweep()).toBe(1);
    const [item] = await queue.pull('high', 1);
    expect(item?.taskId).toBe(task.task_id);
    item?.ack();
  });

  async function announceSpawnedOnly(task: TaskRecord): Promise<number> {
    await announceRun({ bus, publisher, tasks }, task);
    await bus.jsm.streams.purge(RUNS_STREAM);
    return (await tasks.getTask(task.task_id))?.spawned_sequence ?? 0;
  }
});

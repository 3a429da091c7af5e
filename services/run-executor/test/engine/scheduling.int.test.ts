import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNS_STREAM, publishToStream, runsSubject } from '@ars/bus';
import { newTaskRecord } from '../../src/domain/start.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { createLeaseManager } from '../../src/engine/lease.ts';
import { consumerName } from '../../src/engine/priority.ts';
import { createLeaseRepository } from '../../src/store/lease.repository.ts';
import { mostAtOnce, newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

describe('scheduling', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ EXECUTOR_CONCURRENCY: '1' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('runs higher-priority runs first', async () => {
    const caller = newCaller();
    const blocker = await h.start(caller, { query: '#script tool:wait{ms:400};finish:ok' });
    await blocker.watch.until((e) => e.type === 'tool.invoked');
    const low = await h.start(caller, { query: 'low', priority: -3 });
    const normal = await h.start(caller, { query: 'normal' });
    const high = await h.start(caller, { query: 'high', priority: 9 });
    const started = async (w: typeof low) => (await w.watch.until((e) => e.type === 'task.started', 10_000)).sequence;
    const [lowSeq, normalSeq, highSeq] = await Promise.all([started(low), started(normal), started(high)]);
    expect(highSeq).toBeLessThan(normalSeq);
    expect(normalSeq).toBeLessThan(lowSeq);
    for (const w of [blocker, low, normal, high]) {
      await w.watch.terminal();
      w.watch.stop();
    }
  });

  it('offers a run again later while another live executor holds its lease', async () => {
    const other = createLeaseManager(createLeaseRepository(h.store), {
      owner: 'another-executor',
      ttlMs: 1_500,
      onLost: () => {},
    });
    const caller = newCaller();
    const taskId = randomUUID();
    await h.tasks.insertTask(
      newTaskRecord({
        taskId,
        triple: caller,
        request: { identity: {}, query: 'held elsewhere' },
        agent: {},
        artifacts: [],
        now: new Date().toISOString(),
      }),
    );
    expect((await other.acquire(taskId)).ok).toBe(true);
    const watch = await h.watch(caller, taskId);
    const queuedAt = Date.now();
    await enqueueRun(h.bus, { task_id: taskId, priority: 0 });
    await watch.until((e) => e.type === 'task.started', 10_000);
    // Not before the other executor's lease ran out (it never refreshed it).
    expect(Date.now() - queuedAt).toBeGreaterThan(1_000);
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
  });

  it('takes malformed work-queue messages off the queue and goes on running runs', async () => {
    const bodies = ['not json', '[]', '{"task_id":5}', '{"task_id":""}', `{"task_id":"${randomUUID()}"}`];
    for (const body of bodies) {
      await publishToStream(h.bus.nc, runsSubject('normal'), new TextEncoder().encode(body), {
        msgId: `malformed-${randomUUID()}`,
      });
    }
    const run = await h.start(newCaller(), { query: '#script tool:echo{"a":1};finish:after the junk' });
    expect((await run.watch.terminal(10_000)).type).toBe('task.completed');
    run.watch.stop();
    // Nothing is left waiting for an acknowledgement or a redelivery.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const info = await h.bus.jsm.consumers.info(RUNS_STREAM, consumerName('normal'));
      if (info.num_pending === 0 && info.num_ack_pending === 0) break;
      if (Date.now() > deadline) {
        throw new Error(`RUNS still holds ${info.num_pending} pending, ${info.num_ack_pending} unacknowledged`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});

describe('scheduling with two slots', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ EXECUTOR_CONCURRENCY: '2' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('runs at most EXECUTOR_CONCURRENCY runs at once, and uses every slot', async () => {
    const caller = newCaller();
    const runs = await Promise.all(
      Array.from({ length: 5 }, () => h.start(caller, { query: '#script tool:wait{ms:300};finish:ok' })),
    );
    const spans: { started: number; ended: number }[] = [];
    for (const run of runs) {
      const started = await run.watch.until((e) => e.type === 'task.started', 20_000);
      const terminal = await run.watch.terminal(20_000);
      expect(terminal.type).toBe('task.completed');
      spans.push({ started: started.sequence, ended: terminal.sequence });
      run.watch.stop();
    }
    expect(mostAtOnce(spans)).toBe(2);
  });
});

describe('progress heartbeats', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ EXECUTOR_ACK_WAIT_MS: '1000', EXECUTOR_LEASE_TTL_MS: '1000' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('keeps a run longer than the ack wait from being redelivered', async () => {
    const run = await h.start(newCaller(), { query: '#script tool:wait{ms:3500};finish:ok' });
    expect((await run.watch.terminal(15_000)).type).toBe('task.completed');
    run.watch.stop();
    const info = await h.bus.jsm.consumers.info(RUNS_STREAM, consumerName('normal'));
    expect(info.num_redelivered).toBe(0);
    expect(run.watch.types().filter((type) => type === 'task.started')).toHaveLength(1);
  });
});

describe('a prioritised run handed back', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ EXECUTOR_CONCURRENCY: '1', EXECUTOR_DRAIN_GRACE_MS: '0' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('goes back on the bucket of its new priority when its executor drains', async () => {
    const admin = newCaller({ scopes: ['admin'] });
    const run = await h.start(admin, { query: '#script tool:wait{ms:60000};finish:ok' });
    await run.watch.until((e) => e.type === 'tool.invoked');
    await h.control('prioritize', run.taskId, admin, { priority: 9 });
    await run.watch.until((e) => e.type === 'task.prioritised');
    await h.service.stop();
    run.watch.stop();
    const info = (bucket: 'high' | 'normal') => h.bus.jsm.consumers.info(RUNS_STREAM, consumerName(bucket));
    const [high, normal] = await Promise.all([info('high'), info('normal')]);
    expect({ pending: high.num_pending, unacknowledged: high.num_ack_pending }).toEqual({
      pending: 1,
      unacknowledged: 0,
    });
    expect({ pending: normal.num_pending, unacknowledged: normal.num_ack_pending }).toEqual({
      pending: 0,
      unacknowledged: 0,
    });
    const queued = await h.bus.jsm.streams.getMessage(RUNS_STREAM, { last_by_subj: runsSubject('high') });
    expect(JSON.parse(new TextDecoder().decode(queued?.data))).toMatchObject({ task_id: run.taskId });
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, ensureInfrastructure, isConnectionUp, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle } from '@ars/bus';
import { createWorkQueue, enqueueRun } from '../../src/engine/work-queue.ts';

/**
 * The RUNS pull across a nats-server crash: a pull is never sent while the
 * connection is down, and one under way when it drops ends there, so the
 * claim loop is not held for the pull's timeout and claims again as soon as
 * the server is back.
 */

/** Long enough that a pull ending by its timeout fails the test's bounds. */
const PULL_TIMEOUT_MS = 30_000;

describe('work queue pulls across a nats-server crash', () => {
  let dir: string;
  let server: NatsServerHandle;
  let bus: Bus;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-work-queue-'));
    server = await startNatsServer({ storeDir: dir });
    bus = await connectBus({ servers: server.url, name: 'work-queue-test' });
    await ensureInfrastructure(bus);
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends a pull under way when the connection drops, answers one while it is down at once, and claims once it is back', async () => {
    const queue = createWorkQueue(bus, { ackWaitMs: 30_000, pullTimeoutMs: PULL_TIMEOUT_MS });
    await queue.ensureConsumers();
    await enqueueRun(bus, { task_id: 'before', priority: 0 });
    const [first] = await queue.pull('normal', 1);
    expect(first?.taskId).toBe('before');
    first?.ack();

    // A stopped server takes the pull and never answers; the crash then drops the connection.
    await server.freeze();
    const started = Date.now();
    const pending = queue.pull('normal', 1);
    await sleep(100);
    server.kill();
    process.kill(server.pid, 'SIGCONT');
    expect(await pending).toEqual([]);
    expect(Date.now() - started).toBeLessThan(PULL_TIMEOUT_MS / 2);

    for (let i = 0; isConnectionUp(bus.nc); i++) {
      if (i > 500) throw new Error('the client did not notice the server going away');
      await sleep(10);
    }
    const at = Date.now();
    expect(await queue.pull('normal', 1)).toEqual([]);
    expect(Date.now() - at).toBeLessThan(1_000);

    server = await server.restart();
    for (let i = 0; !isConnectionUp(bus.nc); i++) {
      if (i > 1_000) throw new Error('the client did not reconnect');
      await sleep(10);
    }
    await enqueueRun(bus, { task_id: 'after', priority: 0 });
    const [again] = await queue.pull('normal', 1);
    expect(again?.taskId).toBe('after');
    again?.ack();
    queue.close();
  }, 60_000);
});

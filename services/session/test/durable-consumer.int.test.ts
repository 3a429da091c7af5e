import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, DeliverPolicy, EVENTS_STREAM, connectBus, ensureInfrastructure, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle } from '@ars/bus';
import { ensureConsumer } from '../src/consumers/durable-consumer.ts';
import { TASK_EVENTS_FILTER } from '../src/domain/state-records.ts';
import { silent } from './support.ts';

const OLD_LAYOUT_FILTER = 'ars.ev.*.*.*.*.task.>';

describe('durable consumer set-up', () => {
  let storeDir: string;
  let nats: NatsServerHandle;
  let bus: Bus;

  beforeAll(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ars-session-consumer-'));
    nats = await startNatsServer({ storeDir });
    bus = await connectBus({ servers: nats.url, name: 'consumer-test' });
    await ensureInfrastructure(bus);
  });

  afterAll(async () => {
    await bus.close();
    await nats.stop();
    await rm(storeDir, { recursive: true, force: true });
  });

  const options = (durable: string) => ({
    bus,
    logger: silent,
    durable,
    filterSubject: TASK_EVENTS_FILTER,
    handle: async () => undefined,
  });

  it('creates a missing consumer from the start of the stream with the asked filter', async () => {
    await ensureConsumer(options('fresh'));
    const info = await bus.jsm.consumers.info(EVENTS_STREAM, 'fresh');
    expect(info.config.filter_subject).toBe(TASK_EVENTS_FILTER);
    expect(info.config.deliver_policy).toBe(DeliverPolicy.All);
  });

  it('leaves a consumer with the same filter as it is', async () => {
    await ensureConsumer(options('same'));
    const before = await bus.jsm.consumers.info(EVENTS_STREAM, 'same');
    await ensureConsumer(options('same'));
    const after = await bus.jsm.consumers.info(EVENTS_STREAM, 'same');
    expect(after.created).toBe(before.created);
  });

  it('replaces a consumer of the earlier subject layout from just after its acknowledged floor', async () => {
    for (let i = 0; i < 5; i++) await bus.js.publish(`ars.ev.a.b.c.r${i}.task.started`, new Uint8Array());
    await bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: 'legacy',
      filter_subject: OLD_LAYOUT_FILTER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const legacy = await bus.js.consumers.get(EVENTS_STREAM, 'legacy');
    const batch = await legacy.fetch({ max_messages: 3, expires: 2_000 });
    let floor = 0;
    for await (const msg of batch) {
      await msg.ackAck();
      floor = msg.seq;
    }
    expect(floor).toBeGreaterThan(0);

    await ensureConsumer(options('legacy'));
    const info = await bus.jsm.consumers.info(EVENTS_STREAM, 'legacy');
    expect(info.config.filter_subject).toBe(TASK_EVENTS_FILTER);
    expect(info.config.deliver_policy).toBe(DeliverPolicy.StartSequence);
    expect(info.config.opt_start_seq).toBe(floor + 1);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AckPolicy,
  DeliverPolicy,
  EVENTS_STREAM,
  connectBus,
  encodeStoredEvent,
  ensureInfrastructure,
  eventFilterSubject,
  eventSubject,
  startNatsServer,
} from '@ars/bus';
import type { Bus, NatsServerHandle } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';
import { MAX_IN_FLIGHT, ensureConsumer, startDurableConsumer } from '../src/consumers/durable-consumer.ts';
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

  describe('with an ordering key', () => {
    const publishTaskEvent = (session: string, run: string, type: string) =>
      bus.js.publish(
        eventSubject({ tenant: 'acme', user: 'ann', session, type }),
        encodeStoredEvent({
          id: `${session}-${run}-${type}`,
          type,
          occurred_at: new Date().toISOString(),
          tenant: 'acme',
          user: 'ann',
          session,
          run,
          payload: {},
        }),
      );
    const bySession = (frame: EventFrame) => frame.session;

    it("handles another session's events while one session's event is in hand, each session's in stream order", async () => {
      let releaseFirst!: () => void;
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      const handled: string[] = [];
      const consumer = await startDurableConsumer({
        ...options('keyed'),
        filterSubject: eventFilterFor('keyed-test'),
        orderingKey: bySession,
        handle: async (frame) => {
          if (frame.session === 'slow' && frame.run === 'r1') await firstHeld;
          handled.push(`${frame.session}/${frame.run}`);
        },
      });
      try {
        for (let i = 1; i <= 3; i++) await publishTaskEvent('slow', `r${i}`, 'keyed-test.step');
        for (let i = 1; i <= 3; i++) await publishTaskEvent('fast', `r${i}`, 'keyed-test.step');
        await expect.poll(() => handled, { timeout: 10_000 }).toEqual(['fast/r1', 'fast/r2', 'fast/r3']);
        releaseFirst();
        await expect
          .poll(() => handled, { timeout: 10_000 })
          .toEqual(['fast/r1', 'fast/r2', 'fast/r3', 'slow/r1', 'slow/r2', 'slow/r3']);
      } finally {
        releaseFirst();
        await consumer.stop();
      }
      const info = await bus.jsm.consumers.info(EVENTS_STREAM, 'keyed');
      expect(info.num_ack_pending).toBe(0);
      expect(info.ack_floor.stream_seq).toBe(info.delivered.stream_seq);
    });

    it(`holds at most ${MAX_IN_FLIGHT} events at once`, async () => {
      let inHand = 0;
      let most = 0;
      const handled = new Set<string>();
      const consumer = await startDurableConsumer({
        ...options('bounded'),
        filterSubject: eventFilterFor('bounded-test'),
        orderingKey: bySession,
        handle: async (frame) => {
          inHand += 1;
          most = Math.max(most, inHand);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inHand -= 1;
          handled.add(frame.session);
        },
      });
      try {
        const sessions = Array.from({ length: MAX_IN_FLIGHT * 3 }, (_, i) => `s${i}`);
        await Promise.all(sessions.map((session) => publishTaskEvent(session, 'r1', 'bounded-test.step')));
        await expect.poll(() => handled.size, { timeout: 10_000 }).toBe(sessions.length);
      } finally {
        await consumer.stop();
      }
      expect(most).toBe(MAX_IN_FLIGHT);
    });
  });
});

/** The subject filter of every event of `type`'s family (`<type>.>`). */
function eventFilterFor(type: string): string {
  return eventFilterSubject({ type: `${type}.>` });
}

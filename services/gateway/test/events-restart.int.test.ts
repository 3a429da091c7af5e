import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { Bus, EventPublisher, NatsServerHandle } from '@ars/bus';
import { publishMany, started, startIntGateway, startPublisher, subscribeLive, triple } from './support/int-gateway.ts';
import type { IntGateway, Triple } from './support/int-gateway.ts';

let dir: string;
let nats: NatsServerHandle;
let bus: Bus;
let publisher: EventPublisher;
const gateways: IntGateway[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ars-gateway-restart-int-'));
  nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  ({ bus, publisher } = await startPublisher(nats.url));
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop();
  await bus?.close();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function gateway(): Promise<IntGateway> {
  const started = await startIntGateway(nats.url);
  gateways.push(started);
  return started;
}

/** Publishes, retrying while the bus reconnects after a server restart. */
async function publishRetrying(me: Triple, run: string): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return (await publisher.publish(started(me, run))).sequence;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('resuming the event stream across restarts', () => {
  it('resumes after a gateway restart from Last-Event-ID with no gap and no duplicate', async () => {
    const me = triple('gw-restart');
    const first = await gateway();
    const before = await publishMany(publisher, me, 200, 'before');
    const stream = await subscribeLive(first.baseUrl, await first.token(me), { lastEventId: 0 });
    const cursor = stream.reader.frames.at(-1)!.frame.sequence;
    expect(stream.reader.frames.map((block) => block.frame.sequence)).toEqual(before);
    await first.stop();
    await stream.reader.waitEnd();

    const whileDown = await publishMany(publisher, me, 200, 'down');
    const second = await gateway();
    const resumed = await subscribeLive(second.baseUrl, await second.token(me), { lastEventId: cursor });
    try {
      const after = await publishMany(publisher, me, 50, 'after');
      await resumed.reader.frameCount(whileDown.length + after.length);
      expect(resumed.reader.frames.map((block) => block.frame.sequence)).toEqual([...whileDown, ...after]);
    } finally {
      resumed.close();
    }
  });

  it('keeps an open subscription gap-free across a nats-server restart, and replays from file storage', async () => {
    const me = triple('nats-restart');
    const gw = await gateway();
    const token = await gw.token(me);
    const stream = await subscribeLive(gw.baseUrl, token);
    try {
      const before = await publishMany(publisher, me, 100, 'before');
      await stream.reader.frameCount(before.length);

      await nats.stop();
      nats = await startNatsServer({ storeDir: join(dir, 'nats'), port: nats.port });
      const after: number[] = [];
      for (let i = 0; i < 100; i++) after.push(await publishRetrying(me, `after-${i}`));

      await stream.reader.frameCount(before.length + after.length, 20_000);
      expect(stream.reader.frames.map((block) => block.frame.sequence)).toEqual([...before, ...after]);

      const replay = await subscribeLive(gw.baseUrl, token, { lastEventId: before[49]! });
      try {
        expect(replay.reader.frames.map((block) => block.frame.sequence)).toEqual([...before.slice(50), ...after]);
      } finally {
        replay.close();
      }
    } finally {
      stream.close();
    }
  });
});

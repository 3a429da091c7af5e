import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, flushNow, startNatsServer } from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { recordWrites, tempDir } from './helpers.ts';

/** Counts the socket writes of a connection from now on. */
function countWrites(bus: Bus): { readonly count: () => number } {
  const writes = recordWrites(bus);
  return { count: () => writes.length };
}

describe('connectBus', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bus: Bus;

  beforeAll(async () => {
    dir = await tempDir('connection');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'connection-test' });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  /** Subscribes to `subject` (flushed to the server): the subjects received, in order, and when `count` came. */
  async function receive(subject: string, count: number) {
    const received: string[] = [];
    const done = new Promise<void>((resolve) => {
      bus.nc.subscribe(subject, {
        callback: (_error, msg) => {
          received.push(msg.subject);
          if (received.length === count) resolve();
        },
      });
    });
    await bus.nc.flush();
    return { received, done };
  }

  it('writes what one event-loop turn published in one socket write, in order', async () => {
    const { received, done } = await receive('coalesce.>', 20);
    const writes = countWrites(bus);
    for (let i = 0; i < 10; i++) bus.nc.publish(`coalesce.sync.${i}`);
    let chain = Promise.resolve();
    for (let i = 0; i < 10; i++) chain = chain.then(() => bus.nc.publish(`coalesce.async.${i}`));
    await chain;
    await done;
    expect(writes.count()).toBe(1);
    expect(received).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `coalesce.sync.${i}`),
      ...Array.from({ length: 10 }, (_, i) => `coalesce.async.${i}`),
    ]);
  });

  it('flushNow writes what is held at once, in order, and leaves nothing for the end of the turn', async () => {
    const { received, done } = await receive('flushnow.>', 3);
    const writes = countWrites(bus);
    bus.nc.publish('flushnow.a');
    bus.nc.publish('flushnow.b');
    expect(writes.count()).toBe(0); // held for the end of the turn
    flushNow(bus.nc);
    expect(writes.count()).toBe(1);
    flushNow(bus.nc); // nothing held: no write
    expect(writes.count()).toBe(1);
    bus.nc.publish('flushnow.c');
    await done;
    expect(writes.count()).toBe(2);
    expect(received).toEqual(['flushnow.a', 'flushnow.b', 'flushnow.c']);
  });

  it("sends a flush's PING (a subscription's drain) with the turn's write, and resolves on its PONG", async () => {
    const { received, done } = await receive('flushping.>', 2);
    const writes = countWrites(bus);
    bus.nc.publish('flushping.a');
    const flushed = bus.nc.flush();
    bus.nc.publish('flushping.b');
    expect(writes.count()).toBe(0); // the PING waits for the end of the turn with the rest
    await flushed;
    expect(writes.count()).toBe(1);
    await done;
    expect(received).toEqual(['flushping.a', 'flushping.b']);

    // A drain delivers what was published to the subscription before it, then ends it.
    const drained: string[] = [];
    const sub = bus.nc.subscribe('flushping.drain', {
      callback: (_error, msg) => {
        drained.push(msg.string());
      },
    });
    await bus.nc.flush();
    const before = writes.count();
    for (let i = 0; i < 3; i++) bus.nc.publish('flushping.drain', `m${i}`);
    const drain = sub.drain();
    expect(writes.count()).toBe(before);
    await drain;
    expect(writes.count()).toBe(before + 1);
    expect(drained).toEqual(['m0', 'm1', 'm2']);
    expect(sub.isClosed()).toBe(true);
  });

  it('still answers requests across turns', async () => {
    const sub = bus.nc.subscribe('coalesce.echo', {
      callback: (_error, msg) => {
        msg.respond(msg.data);
      },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await bus.nc.request('coalesce.echo', new TextEncoder().encode(`m${i}`), { timeout: 2_000 });
        expect(reply.string()).toBe(`m${i}`);
      }
    } finally {
      sub.unsubscribe();
    }
  });
});

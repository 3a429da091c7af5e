import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { connectBus, ensureInfrastructure, startNatsServer, tailEvents } from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { followTail, tempDir } from './helpers.ts';

/**
 * The live tail of the EVENTS stream across a nats-server crash: killed
 * with SIGKILL and started again on the same port and store, the tail goes
 * on after the last sequence it delivered, with no gap and no duplicate.
 */
describe('event tail', () => {
  let server: NatsServerHandle | undefined;
  let bus: Bus | undefined;
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined;

  afterEach(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  /** Publishes `count` events, retrying while JetStream is not back yet. */
  async function publish(from: number, count: number): Promise<void> {
    for (let n = from; n < from + count; n++) {
      for (let attempt = 0; ; attempt++) {
        try {
          await (bus as Bus).js.publish(`ars.ev.t.u.s.test.event`, new TextEncoder().encode(String(n)));
          break;
        } catch (error) {
          if (attempt > 100) throw error;
          await sleep(100);
        }
      }
    }
  }

  it('goes on after a server restart from the sequence after the last it delivered', { timeout: 60_000 }, async () => {
    dir = await tempDir('tail');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'tail-test' });
    await ensureInfrastructure(bus);
    const tail = await tailEvents(bus, { startSequence: 1 });
    const { seen, until, done: following } = followTail(tail);
    await publish(1, 3);
    await until(3, 5_000);
    expect(seen.map((r) => r.seq)).toEqual([1, 2, 3]);
    server.kill();
    server = await server.restart();
    await publish(4, 3);
    // Well inside the heartbeats the client would otherwise wait for.
    await until(6, 15_000);
    expect(seen.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seen.map((r) => new TextDecoder().decode(r.data))).toEqual(['1', '2', '3', '4', '5', '6']);
    await tail.close();
    await following;
  });
});

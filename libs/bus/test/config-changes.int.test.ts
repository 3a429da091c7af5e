import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONFIG_CHANGED_SUBJECT,
  connectBus,
  createConfigChangeAnnouncer,
  startNatsServer,
  watchConfigChanges,
} from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

/** Polls `check` every 10 ms until it holds, at most `ms`. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('configuration change notices', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /** A nats-server (replaced on restart) with an announcing and a watching connection. */
  async function twoConnections(): Promise<{ server: NatsServerHandle; announcing: Bus; watching: Bus }> {
    const dir = await tempDir('config-changes');
    cleanup.push(dir.remove);
    const setup = { server: await startNatsServer({ storeDir: dir.path }) } as {
      server: NatsServerHandle;
      announcing: Bus;
      watching: Bus;
    };
    cleanup.push(() => setup.server.stop());
    setup.announcing = await connectBus({ servers: setup.server.url, name: 'announcer' });
    cleanup.push(() => setup.announcing.close());
    setup.watching = await connectBus({ servers: setup.server.url, name: 'watcher' });
    cleanup.push(() => setup.watching.close());
    return setup;
  }

  it('reaches every watcher (no queue group), each announce once, until the watch stops', async () => {
    const { announcing, watching } = await twoConnections();
    let first = 0;
    let second = 0;
    const one = watchConfigChanges(watching, () => (first += 1));
    const two = watchConfigChanges(watching, () => (second += 1));
    await watching.nc.flush();
    const announcer = createConfigChangeAnnouncer(announcing, 'agent-registry');
    announcer.announce();
    announcer.announce();
    await until(() => first === 2 && second === 2);
    one.stop();
    one.stop();
    await watching.nc.flush();
    announcer.announce();
    await until(() => second === 3);
    await sleep(50);
    expect(first).toBe(2);
    two.stop();
    announcer.stop();
    announcer.announce();
    await sleep(50);
    expect(second).toBe(3);
  });

  it('tells a watcher when its connection drops, and announces again once the announcer is back', async () => {
    const setup = await twoConnections();
    const { announcing, watching } = setup;
    let changes = 0;
    const watch = watchConfigChanges(watching, () => (changes += 1));
    cleanup.push(async () => watch.stop());
    const announcer = createConfigChangeAnnouncer(announcing, 'governance');
    cleanup.push(async () => announcer.stop());
    await watching.nc.flush();

    // The announcer's own notices, as any watcher connected then would get them.
    let echoed = 0;
    announcing.nc.subscribe(CONFIG_CHANGED_SUBJECT, { callback: () => void (echoed += 1) });
    await announcing.nc.flush();

    setup.server.kill();
    // The drop itself: whatever was announced meanwhile is lost to this watcher.
    await until(() => changes >= 1);
    const afterDrop = changes;
    setup.server = await setup.server.restart();
    // Its own reconnect counts too; the announcer, once back, announces again.
    await until(() => changes > afterDrop, 15_000);
    await until(() => echoed >= 1, 15_000);
  });
});

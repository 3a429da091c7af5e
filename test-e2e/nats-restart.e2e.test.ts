import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArsError } from '@ars/client';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestNats, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestNats, TestSystem } from '@ars/testkit';
import { isTerminal } from './support/event-log.ts';
import { barrierRun, startWatched, storedRunEvents } from './support/runs.ts';

/**
 * nats-server killed with SIGKILL while a run waits in a tool, and started
 * again on the same port and store: every service reconnects by itself, the
 * run's events emitted during the outage are stored once it is back, and a
 * subscriber connected throughout receives the run whole, in order, once.
 */

const SCRIPT = '#script tool:wait{"ms":2000};tool:echo{"n":1};finish:done';

const types = (frames: readonly EventFrame[]) => frames.map((f) => f.type);

describe('a nats-server crash in the middle of a run', () => {
  let nats: TestNats;
  let sys: TestSystem;
  let client: ArsClient;
  let reference: string[];
  let live: EventFrame[];
  let stored: EventFrame[];
  let refusedStart: unknown;

  beforeAll(async () => {
    nats = await startTestNats();
    sys = await startTestSystem({ natsUrl: nats.url });
    client = sys.client({ token: await mintToken(sys.baseUrl, uniqueIdentity('nats-restart')) });

    // The same script undisturbed: the events every such run has, in order.
    const undisturbed = await startWatched(client, { query: SCRIPT });
    await undisturbed.log.terminal({ timeoutMs: 20_000 });
    reference = types(await storedRunEvents(client, undisturbed.taskId));
    await undisturbed.log.close();

    const run = await startWatched(client, { query: SCRIPT });
    await run.log.next('tool.invoked', (f) => (f.payload as Record<string, unknown>)['ToolName'] === 'wait');
    nats.kill();
    // A start sent while the gateway has no bus connection is refused at once, and never runs.
    for (let i = 0; (await fetch(`${sys.baseUrl}/readyz`)).status !== 503; i++) {
      if (i > 100) throw new Error('the gateway did not notice the bus going away');
      await sleep(20);
    }
    refusedStart = await client.call('start', { identity: {}, query: 'never sent' }).catch((error: unknown) => error);
    // The wait tool completes while the server is down.
    await sleep(3_000);
    await nats.restart();
    await run.log.terminal({ timeoutMs: 60_000 });
    await barrierRun(client);
    live = [...run.log.frames];
    stored = await storedRunEvents(client, run.taskId);
    await run.log.close();
  }, 150_000);

  afterAll(async () => {
    await sys?.stop();
    await nats?.stop();
  });

  it('refuses a start while the gateway has no bus connection with 503 unavailable, and that start never runs', async () => {
    expect(refusedStart).toBeInstanceOf(ArsError);
    expect(refusedStart).toMatchObject({ status: 503, code: 'unavailable' });
    const { items } = await client.call<{ items: { query: string }[] }>('tasks.list', { identity: {} });
    expect(items.length).toBeGreaterThan(0);
    expect(items.map((task) => task.query)).not.toContain('never sent');
  });

  it('stores every event of the run once, in the order of an undisturbed run', () => {
    expect(reference).toContain('tool.completed');
    expect(types(stored)).toEqual(reference);
    expect(stored.filter(isTerminal).map((f) => f.type)).toEqual(['task.completed']);
  });

  it('delivers the run whole to the subscriber connected throughout, in stream order, each frame once', () => {
    expect(types(live)).toEqual(reference);
    const sequences = live.map((f) => f.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences).toEqual(stored.map((f) => f.sequence));
  });
});

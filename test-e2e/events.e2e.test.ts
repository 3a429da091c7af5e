import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isControlEvent } from '@ars/client';
import type { ArsClient, StreamControlEvent } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { collectEvents, mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';

/**
 * The event stream end to end: real gateway process, real NATS, the SDK's
 * SSE client. Events come from the gateway itself: an admin call naming
 * another tenant publishes audit.admin_scope_used under the caller's triple.
 */
describe('events.subscribe end to end', () => {
  let sys: TestSystem;
  let alice: TestIdentity;
  let bob: TestIdentity;
  let aliceClient: ArsClient;
  let bobClient: ArsClient;

  /** One audit event under the caller's own triple; resolves once the call returned. */
  const crossing = (client: ArsClient, session?: string) =>
    client.call('runtime.info', { identity: { tenant: 'someone-else' } }, session === undefined ? {} : { session });

  type Item = EventFrame | StreamControlEvent;
  const frames = (items: readonly Item[]) => items.filter((item): item is EventFrame => !isControlEvent(item));
  const isComplete = (item: Item) => isControlEvent(item) && item.control === 'replay.complete';

  /** Subscribes and resolves with the iterator once live delivery has begun. */
  async function live(client: ArsClient, options: { lastEventId?: number; session?: string } = {}) {
    const iterator = client
      .subscribe({ includeControlEvents: true, reconnect: false, ...options })
      [Symbol.asyncIterator]();
    const seen: Item[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw new Error('the stream ended before replay.complete');
      seen.push(next.value);
      if (isComplete(next.value)) break;
    }
    const iterable: AsyncIterable<Item> = { [Symbol.asyncIterator]: () => iterator };
    return { seen, iterable };
  }

  beforeAll(async () => {
    sys = await startTestSystem({ mode: 'one-process' });
    alice = uniqueIdentity('ev-alice');
    bob = uniqueIdentity('ev-bob');
    aliceClient = sys.client({ token: await mintToken(sys.baseUrl, { ...alice, scopes: ['admin'] }) });
    bobClient = sys.client({ token: await mintToken(sys.baseUrl, bob) });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('advertises events_subscribe', async () => {
    const info = await aliceClient.call<{ capabilities: string[] }>('runtime.info', { identity: {} });
    expect(info.capabilities).toContain('events_subscribe');
  });

  it('delivers each subscriber only its own triple', async () => {
    const aliceStream = await live(aliceClient);
    const bobStream = await live(bobClient);
    const otherSession = await live(aliceClient, { session: `${alice.session}-other` });
    await crossing(aliceClient);
    await crossing(aliceClient);
    const aliceItems = await collectEvents(aliceStream.iterable, (_item, all) => frames(all).length === 2);
    expect(frames(aliceItems).map((frame) => [frame.type, frame.tenant, frame.user, frame.session])).toEqual([
      ['audit.admin_scope_used', alice.tenant, alice.user, alice.session],
      ['audit.admin_scope_used', alice.tenant, alice.user, alice.session],
    ]);
    // A later event of each other subscriber arrives first on its stream: Alice's never reached them.
    await crossing(aliceClient, `${alice.session}-other`);
    const otherItems = await collectEvents(otherSession.iterable, (_item, all) => frames(all).length === 1);
    expect(frames(otherItems)[0]?.session).toBe(`${alice.session}-other`);
    const bobAdmin = sys.client({ token: await mintToken(sys.baseUrl, { ...bob, scopes: ['admin'] }) });
    await crossing(bobAdmin);
    const bobItems = await collectEvents(bobStream.iterable, (_item, all) => frames(all).length === 1);
    expect(frames(bobItems).map((frame) => frame.tenant)).toEqual([bob.tenant]);
  });

  it('replays strictly after Last-Event-ID with no gap and no duplicate', async () => {
    const first = await live(aliceClient);
    for (let i = 0; i < 5; i++) await crossing(aliceClient);
    const original = frames(await collectEvents(first.iterable, (_item, all) => frames(all).length === 5));
    const sequences = original.map((frame) => frame.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));

    const resumed = await live(aliceClient, { lastEventId: sequences[1]! });
    expect(frames(resumed.seen).map((frame) => frame.sequence)).toEqual(sequences.slice(2));
    const complete = resumed.seen.at(-1) as StreamControlEvent;
    expect((complete.data as { sequence: number }).sequence).toBeGreaterThanOrEqual(sequences.at(-1)!);

    await crossing(aliceClient);
    const next = frames(await collectEvents(resumed.iterable, (_item, all) => frames(all).length === 1));
    expect(next[0]!.sequence).toBeGreaterThan(sequences.at(-1)!);
  });

  it('refuses admin fan-in to a scopeless caller with 403 scope_mismatch', async () => {
    const iterator = bobClient.subscribe({ admin: true, reconnect: false })[Symbol.asyncIterator]();
    const error = await iterator.next().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 403, code: 'scope_mismatch' });
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getEvent } from '@ars/contracts';
import { createHarness, openEventStream } from './support/harness.ts';
import type { Harness, StreamOptions } from './support/harness.ts';
import type { AppendEvent } from './support/memory-event-log.ts';
import { FailingReadLog, MemoryEventLog, ShortReadLog } from './support/memory-event-log.ts';
import { SseReader } from './support/sse-reader.ts';

const OWN = { tenant: 't1', user: 'u1', session: 's1' } as const;
const started = (run = 'r1', identity: Partial<AppendEvent> = {}): AppendEvent => ({
  ...OWN,
  run,
  type: 'task.started',
  payload: { TaskID: run, PriorState: 'pending' },
  ...identity,
});

let h: Harness;
const streams: AbortController[] = [];

async function subscribe(options: StreamOptions = {}): Promise<SseReader> {
  const { response, abort } = await openEventStream(h, options);
  streams.push(abort);
  expect(response.statusCode, response.statusMessage).toBe(200);
  return new SseReader(response.stream());
}

/** Subscribes and waits until live delivery has begun. */
async function live(options: StreamOptions = {}): Promise<SseReader> {
  const reader = await subscribe(options);
  await reader.until((r) => r.named('replay.complete').length > 0);
  return reader;
}

async function refusal(options: StreamOptions): Promise<{ status: number; body: { code: string } }> {
  const { response } = await openEventStream(h, options);
  const chunks: Buffer[] = [];
  for await (const chunk of response.stream()) chunks.push(chunk as Buffer);
  return { status: response.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
}

beforeEach(async () => {
  h = await createHarness({ events: { heartbeatMs: 60_000 } });
});

afterEach(async () => {
  for (const abort of streams.splice(0)) abort.abort();
  await h.close();
});

describe('events.subscribe: frames', () => {
  it('writes each event as id: <sequence> and one data line holding the frame', async () => {
    const reader = await live();
    const seq = h.log.append(started('run-a'));
    await reader.frameCount(1);
    const [block] = reader.frames;
    expect(block?.id).toBe(String(seq));
    expect(block?.dataLines).toHaveLength(1);
    expect(Object.keys(block!.frame).sort()).toEqual(
      ['occurred_at', 'payload', 'run', 'sequence', 'session', 'tenant', 'type', 'user'].sort(),
    );
    expect(block?.frame).toMatchObject({ type: 'task.started', sequence: seq, ...OWN, run: 'run-a' });
  });

  it('answers with text/event-stream and no caching', async () => {
    const { response, abort } = await openEventStream(h);
    streams.push(abort);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toContain('no-cache');
  });

  it('delivers sequences in strictly increasing order', async () => {
    const reader = await live();
    for (let i = 0; i < 50; i++) h.log.append(started(`r${i}`));
    await reader.frameCount(50);
    const sequences = reader.frames.map((block) => block.frame.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(50);
  });

  it('announces live delivery with a named replay.complete event carrying the position', async () => {
    h.log.append(started());
    const reader = await live();
    expect(reader.named('replay.complete')[0]?.dataLines).toEqual([JSON.stringify({ sequence: 1 })]);
    expect(reader.frames).toEqual([]);
  });
});

describe('events.subscribe: isolation', () => {
  it.each([
    ['another tenant', { tenant: 't2' }],
    ['another user', { user: 'u2' }],
    ['another session', { session: 's2' }],
  ])('never delivers the events of %s', async (_name, other) => {
    const reader = await live();
    h.log.append(started('theirs', other));
    const mine = h.log.append(started('mine'));
    await reader.frameCount(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([mine]);
  });

  it('follows the session chosen by X-Service-Session', async () => {
    const reader = await live({ session: 's2' });
    h.log.append(started('in-s1'));
    const seq = h.log.append(started('in-s2', { session: 's2' }));
    await reader.frameCount(1);
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([seq]);
  });
});

describe('events.subscribe: filters', () => {
  it('narrows to one run with X-Service-Run', async () => {
    const reader = await live({ run: 'r2' });
    h.log.append(started('r1'));
    const seq = h.log.append(started('r2'));
    await reader.frameCount(1);
    expect(reader.frames.map((block) => block.frame.run)).toEqual(['r2']);
    expect(reader.frames[0]?.frame.sequence).toBe(seq);
  });

  it('narrows to one type with X-Service-Event-Type', async () => {
    const reader = await live({ types: 'task.completed' });
    h.log.append(started());
    h.log.append({ ...OWN, run: 'r1', type: 'task.completed', payload: {} });
    await reader.frameCount(1);
    expect(reader.frames.map((block) => block.frame.type)).toEqual(['task.completed']);
  });

  it('takes a comma-separated list of types, whitespace ignored', async () => {
    const reader = await live({ types: ' task.completed , task.failed ' });
    h.log.append(started());
    h.log.append({ ...OWN, type: 'task.completed', payload: {} });
    h.log.append({ ...OWN, type: 'task.cancelled', payload: {} });
    h.log.append({ ...OWN, type: 'task.failed', payload: {} });
    await reader.frameCount(2);
    expect(reader.frames.map((block) => block.frame.type)).toEqual(['task.completed', 'task.failed']);
  });

  it('combines a run and a list of types', async () => {
    const reader = await live({ run: 'r2', types: 'task.started,task.failed' });
    h.log.append(started('r1'));
    h.log.append({ ...OWN, run: 'r2', type: 'task.completed', payload: {} });
    h.log.append(started('r2'));
    h.log.append({ ...OWN, run: 'r2', type: 'task.failed', payload: {} });
    await reader.frameCount(2);
    expect(reader.frames.map((block) => [block.frame.run, block.frame.type])).toEqual([
      ['r2', 'task.started'],
      ['r2', 'task.failed'],
    ]);
  });

  it('applies the filters to the replay too', async () => {
    h.log.append(started('r1'));
    h.log.append(started('r2'));
    h.log.append({ ...OWN, run: 'r2', type: 'task.failed', payload: {} });
    h.log.append({ ...OWN, run: 'r2', type: 'task.completed', payload: {} });
    const reader = await live({ lastEventId: 0, run: 'r2', types: 'task.started,task.completed' });
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([2, 4]);
  });

  it.each([
    ['a wildcard type', { types: 'task.*' }],
    ['a malformed type', { types: 'task..started' }],
    ['a non-numeric Last-Event-ID', { lastEventId: 'abc' }],
    ['a negative Last-Event-ID', { lastEventId: '-1' }],
    ['admin=2', { query: 'admin=2' }],
  ] as const)('refuses %s with 400 invalid_request', async (_name, options) => {
    const answer = await refusal(options);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
  });
});

describe('events.subscribe: Last-Event-ID', () => {
  it('resumes strictly after the cursor, then says replay.complete before live events', async () => {
    for (let i = 0; i < 10; i++) h.log.append(started(`r${i}`));
    const reader = await live({ lastEventId: 4 });
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([5, 6, 7, 8, 9, 10]);
    const complete = reader.named('replay.complete')[0];
    expect(JSON.parse(complete!.dataLines[0]!)).toEqual({ sequence: 10 });
    h.log.append(started('after'));
    await reader.frameCount(7);
    expect(reader.frames.at(-1)?.frame.sequence).toBe(11);
    const order = reader.blocks.map((block) => block.event ?? block.id);
    expect(order.indexOf('replay.complete')).toBe(6);
  });

  it('replays only the subscriber triple', async () => {
    h.log.append(started('a', { tenant: 't2' }));
    h.log.append(started('b'));
    h.log.append(started('c', { session: 's9' }));
    const reader = await live({ lastEventId: 0 });
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([2]);
  });

  it('treats a cursor at or beyond the position as live only', async () => {
    h.log.append(started());
    const reader = await live({ lastEventId: 1 });
    expect(reader.frames).toEqual([]);
    expect(JSON.parse(reader.named('replay.complete')[0]!.dataLines[0]!)).toEqual({ sequence: 1 });
  });

  it('answers a cursor older than the retained stream with bus.dropped naming the range, then continues', async () => {
    for (let i = 0; i < 10; i++) h.log.append(started(`r${i}`));
    h.log.expireBefore(6);
    const reader = await live({ lastEventId: 2 });
    const [dropped, ...rest] = reader.frames;
    expect(dropped?.frame).toMatchObject({
      type: 'bus.dropped',
      sequence: 5,
      ...OWN,
      payload: { FromSeq: 3, ToSeq: 5, DroppedCount: 3 },
    });
    expect(dropped?.id).toBe('5');
    expect(getEvent('bus.dropped')!.payload.safeParse(dropped!.frame.payload).success).toBe(true);
    expect(rest.map((block) => block.frame.sequence)).toEqual([6, 7, 8, 9, 10]);
  });

  it('closes its replay read once live', async () => {
    for (let i = 0; i < 10; i++) h.log.append(started(`r${i}`));
    const reader = await live({ lastEventId: 0 });
    expect(reader.frames).toHaveLength(10);
    expect(h.log.readsOpened).toBe(1);
    expect(h.log.openReads).toBe(0);
  });

  it('forgets the subscriber when the client hangs up', async () => {
    await live();
    expect(h.hub.size).toBe(1);
    streams.pop()?.abort();
    await vi.waitFor(() => expect(h.hub.size).toBe(0));
  });
});

describe('events.subscribe: admin fan-in', () => {
  it('refuses admin=1 without admin or console:fleet with 403 scope_mismatch', async () => {
    const answer = await refusal({ query: 'admin=1' });
    expect(answer).toEqual({ status: 403, body: expect.objectContaining({ code: 'scope_mismatch' }) });
    expect(h.events.published).toEqual([]);
  });

  it.each(['admin', 'console:fleet'])('fans in across tenants for %s and audits it (shape 1)', async (scope) => {
    const reader = await live({ query: 'admin=1', token: h.token({ scopes: [scope] }) });
    h.log.append(started('a', { tenant: 't2', user: 'x', session: 'y' }));
    h.log.append(started('b'));
    await reader.frameCount(2);
    expect(reader.frames.map((block) => block.frame.tenant)).toEqual(['t2', 't1']);
    const audit = h.events.published.find((event) => event.type === 'audit.admin_scope_used');
    expect(audit?.identity).toMatchObject(OWN);
    expect(audit?.payload).toEqual({
      ...{ Tenant: 't1', User: 'u1', Session: 's1' },
      SubscriberID: expect.any(Number),
    });
    expect(getEvent('audit.admin_scope_used')!.payload.safeParse(audit!.payload).success).toBe(true);
  });

  it('keeps the run and type filters under admin=1', async () => {
    const reader = await live({ query: 'admin=1', token: h.token({ scopes: ['admin'] }), run: 'r7' });
    h.log.append(started('r1', { tenant: 't3' }));
    h.log.append(started('r7', { tenant: 't4' }));
    await reader.frameCount(1);
    expect(reader.frames.map((block) => block.frame.tenant)).toEqual(['t4']);
  });

  it('does not fan in for a claim holder who does not ask for it', async () => {
    const reader = await live({ token: h.token({ scopes: ['admin'] }) });
    h.log.append(started('a', { tenant: 't2' }));
    const seq = h.log.append(started('b'));
    await reader.frameCount(1);
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([seq]);
    expect(h.events.published).toEqual([]);
  });
});

/** A log that appends `count` more events for the subscriber while a replay is at its `after`-th record. */
class BusyLog extends MemoryEventLog {
  readonly after: number;
  readonly count: number;

  constructor(after: number, count: number) {
    super();
    this.after = after;
    this.count = count;
  }

  override async read(options: Parameters<MemoryEventLog['read']>[0]) {
    const inner = await super.read(options);
    const burst = () => {
      for (let i = 0; i < this.count; i++) this.append(started(`live-${i}`));
    };
    const after = this.after;
    let yielded = 0;
    return {
      pendingAtStart: inner.pendingAtStart,
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const record of inner) {
          yield record;
          if (++yielded === after) {
            burst();
            // Let the hub's tail dispatch them while the replay is still running.
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
      },
    };
  }
}

describe('events.subscribe: replay to live hand-over', () => {
  /** Ten stored events replayed from `Last-Event-ID: 0` over `log`, then one live: the subscriber gets all eleven once, in order. */
  async function replayTenThenOne(log: MemoryEventLog): Promise<SseReader> {
    await h.close();
    h = await createHarness({ log, events: { heartbeatMs: 60_000 } });
    for (let i = 0; i < 10; i++) h.log.append(started(`r${i}`));
    await vi.waitFor(() => expect(h.hub.position).toBe(10));
    const reader = await live({ lastEventId: 0 });
    const later = h.log.append(started('after'));
    await reader.frameCount(11);
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i + 1),
      later,
    ]);
    return reader;
  }

  it('reads on when a read ends below the hand-over position, so no replayed event is skipped', async () => {
    const log = new ShortReadLog(3);
    await replayTenThenOne(log);
    expect(log.readsOpened).toBe(2);
  });

  it('reads again after a read that failed (nats-server restarting), from the last record read, keeping the connection', async () => {
    const log = new FailingReadLog(3, 2);
    const reader = await replayTenThenOne(log);
    expect(reader.ended).toBe(false);
    // Two failed reads after 3 records each, then one that reads the remaining 4.
    expect(log.readsOpened).toBe(3);
  });

  it('closes the subscription when reads keep failing past replayRetryMs, after what it could read', async () => {
    await h.close();
    const log = new FailingReadLog(2, Number.POSITIVE_INFINITY);
    h = await createHarness({ log, events: { heartbeatMs: 60_000, replayRetryMs: 300 } });
    for (let i = 0; i < 10; i++) h.log.append(started(`r${i}`));
    await vi.waitFor(() => expect(h.hub.position).toBe(10));
    const reader = await subscribe({ lastEventId: 0 });
    await reader.waitEnd();
    expect(reader.named('replay.complete')).toEqual([]);
    const sequences = reader.frames.map((block) => block.frame.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(sequences.slice(0, 4)).toEqual([1, 2, 3, 4]);
    expect(log.readsOpened).toBeGreaterThan(2);
  });

  async function handOver(bufferBytes: number) {
    await h.close();
    const log = new BusyLog(50, 60);
    h = await createHarness({ log, events: { heartbeatMs: 60_000, subscriberBufferBytes: bufferBytes } });
    for (let i = 0; i < 100; i++) h.log.append(started(`r${i}`));
    const reader = await live({ lastEventId: 0 });
    await reader.frameCount(160);
    return { reader, log };
  }

  it('delivers events published during the replay once and in order', async () => {
    const { reader } = await handOver(1_048_576);
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
  });

  it('reads on from the stream when the live events held during the replay overflow', async () => {
    const { reader, log } = await handOver(4_096);
    expect(reader.frames.map((block) => block.frame.sequence)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    expect(log.readsOpened).toBeGreaterThanOrEqual(1);
    const complete = JSON.parse(reader.named('replay.complete')[0]!.dataLines[0]!) as { sequence: number };
    expect(complete.sequence).toBeGreaterThanOrEqual(100);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ars/telemetry';
import {
  EVENTS_STREAM,
  connectBus,
  createEventPublisher,
  ensureInfrastructure,
  eventFilterSubject,
  LAGGING_REPLICA_RETRIES,
  nextStoredEvent,
  readEvents,
  startNatsServer,
  tailEvents,
} from '../src/index.ts';
import type { Bus, EventPublisher, EventRecord, NatsServerHandle, StoredPosition } from '../src/index.ts';
import { tempDir } from './helpers.ts';

// A session erasure purges the session's subjects from the EVENTS stream.
// nats-server before 2.9.15 (2.9.10 is Debian's, used here) moves every
// consumer whose filter covers the purged subject to the end of the stream
// (nats-server#3838): a read or the tail under way then gets nothing more of
// what it was reading (the range read stalled for READ_STALL_MS and answered
// 503: issue 32, item 5), or skips it. The reader notices and reads again
// after the last record it delivered. The end of a read is confirmed with
// the stream's leader (nextStoredEvent, a purge making no difference to it):
// a read's consumer placed on a replica still catching up after a restart
// (nats-server#7165) counts nothing where the leader holds more. One server
// has no lagging replica, so those tests stand a leader in (`leader`).

const log = createLogger({ name: 'event-reader-purge', level: 'silent' });

describe('event reads across a purge of another session, and their ends confirmed with the leader', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let publisher: EventPublisher;

  beforeAll(async () => {
    dir = await tempDir('event-reader-purge');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'event-reader-purge' });
    await ensureInfrastructure(bus);
    publisher = createEventPublisher(bus, { source: 'event-reader-purge', logger: log });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  async function publish(tenant: string, session: string, count: number): Promise<number[]> {
    const sequences: number[] = [];
    for (let i = 0; i < count; i++) {
      const { sequence } = await publisher.publish({
        type: 'task.started',
        identity: { tenant, user: 'alice', session, run: `run-${i}` },
        payload: { TaskID: `run-${i}`, PriorState: 'pending' },
      });
      sequences.push(sequence);
    }
    return sequences;
  }

  const purge = (tenant: string, session: string) =>
    bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventFilterSubject({ tenant, user: 'alice', session }) });

  it('delivers the rest of a range read when another session is purged under way, without a stall', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const before = await publish(tenant, 'kept', 30);
    await publish(tenant, 'erased', 5);
    const after = await publish(tenant, 'kept', 30);
    const reader = await readEvents(bus, {
      filterSubject: eventFilterSubject({ tenant, user: 'alice' }),
      startSequence: before[0]!,
      batch: 10,
    });
    const seen: number[] = [];
    const started = Date.now();
    try {
      for await (const record of reader) {
        seen.push(record.seq);
        if (seen.length === 5) await purge(tenant, 'erased');
      }
    } finally {
      await reader.close();
    }
    expect(seen).toEqual([...before, ...after]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('keeps the tail gapless when a purge lands while it lags', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const first = await publish(tenant, 'kept', 1);
    await publish(tenant, 'erased', 3);
    const rest = await publish(tenant, 'kept', 40);
    const tail = await tailEvents(bus, { startSequence: first[0]!, batch: 5 });
    const seen: EventRecord[] = [];
    try {
      for await (const record of tail) {
        seen.push(record);
        if (seen.length === 1) await purge(tenant, 'erased');
        if (record.seq === rest.at(-1)) break;
      }
    } finally {
      await tail.close();
    }
    const kept = new Set([...first, ...rest]);
    expect(seen.map((record) => record.seq).filter((seq) => kept.has(seq))).toEqual([...first, ...rest]);
  }, 20_000);

  it("finds with the leader a session's next message past other sessions' and purged ones, and none after its last", async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const [a1] = await publish(tenant, 'a', 1);
    const [b1] = await publish(tenant, 'b', 1);
    const [a2] = await publish(tenant, 'a', 1);
    const [erased] = await publish(tenant, 'erased', 1);
    await purge(tenant, 'erased');
    const [b2] = await publish(tenant, 'b', 1);
    const session = eventFilterSubject({ tenant, user: 'alice', session: 'a' });
    const next = async (filter: string, from: number) => (await nextStoredEvent(bus, filter, from))?.seq;
    expect(await next(session, a1!)).toBe(a1);
    expect(await next(session, b1!)).toBe(a2);
    expect(await next(session, a2! + 1)).toBeUndefined();
    // The whole tenant (a wider wildcard) skips the purged message; a tenant with nothing stored has none.
    expect(await next(eventFilterSubject({ tenant }), erased!)).toBe(b2);
    expect(await next(eventFilterSubject({ tenant: `none-${tenant}` }), 1)).toBeUndefined();
    // The stored time is the leader's, as the read's own records carry it.
    const stored = await nextStoredEvent(bus, session, a1!);
    const reader = await readEvents(bus, { filterSubject: session, startSequence: a1! });
    try {
      for await (const record of reader) {
        if (record.seq === a1) expect(stored?.storedAtMs).toBe(record.storedAtMs);
      }
    } finally {
      await reader.close();
    }
  });

  /** Reads every record of a read, with the leader's answers it asked for. */
  async function readAll(
    filterSubject: string,
    leader: (filter: string, from: number) => Promise<StoredPosition | undefined>,
    extra: { startSequence?: number; confirmEnd?: boolean } = {},
  ): Promise<{ seqs: number[]; asked: number[] }> {
    const asked: number[] = [];
    const reader = await readEvents(bus, {
      filterSubject,
      ...extra,
      leader: (filter, from) => {
        asked.push(from);
        return leader(filter, from);
      },
    });
    const seqs: number[] = [];
    try {
      for await (const record of reader) seqs.push(record.seq);
    } finally {
      await reader.close();
    }
    return { seqs, asked };
  }

  const session = (tenant: string) => eventFilterSubject({ tenant, user: 'alice', session: 'kept' });

  it('reads on when the leader holds a record, stored before the read began, that its consumer did not count', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const stored = await publish(tenant, 'kept', 3);
    let late: number | undefined;
    const { seqs, asked } = await readAll(session(tenant), async (filter, from) => {
      if (late !== undefined) return nextStoredEvent(bus, filter, from);
      // The replica the consumer sat on had not caught up with this one yet: the leader had it.
      [late] = await publish(tenant, 'kept', 1);
      return { seq: late!, storedAtMs: 0 };
    });
    expect(seqs).toEqual([...stored, late]);
    expect(asked).toEqual([stored.at(-1)! + 1, late! + 1]);
  });

  it('confirms an empty read too, from its start', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    let late: number | undefined;
    const { seqs, asked } = await readAll(
      session(tenant),
      async (filter, from) => {
        if (late !== undefined) return nextStoredEvent(bus, filter, from);
        [late] = await publish(tenant, 'kept', 1);
        return { seq: late!, storedAtMs: 0 };
      },
      { startSequence: 1 },
    );
    expect(seqs).toEqual([late]);
    expect(asked).toEqual([1, late! + 1]);
  });

  it('fails unavailable, not short, when the leader keeps holding a record its reads never deliver', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const [only] = await publish(tenant, 'kept', 1);
    const asked: number[] = [];
    const reader = await readEvents(bus, {
      filterSubject: session(tenant),
      leader: (_filter, from) => {
        asked.push(from);
        return Promise.resolve({ seq: only! + 1, storedAtMs: 0 });
      },
    });
    const seqs: number[] = [];
    await expect(
      (async () => {
        for await (const record of reader) seqs.push(record.seq);
      })(),
    ).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('catching up') });
    await reader.close();
    expect(seqs).toEqual([only]);
    expect(asked).toEqual(Array.from({ length: LAGGING_REPLICA_RETRIES + 1 }, () => only! + 1));
  }, 20_000);

  it('does not wait for records the leader stored after the read began', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const stored = await publish(tenant, 'kept', 2);
    const started = Date.now();
    const { seqs, asked } = await readAll(session(tenant), () =>
      Promise.resolve({ seq: stored.at(-1)! + 1, storedAtMs: Date.now() + 60_000 }),
    );
    expect(seqs).toEqual(stored);
    expect(asked).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('leaves the end to a caller that confirms it itself (confirmEnd: false)', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const stored = await publish(tenant, 'kept', 2);
    const { seqs, asked } = await readAll(
      session(tenant),
      () => Promise.reject(new Error('the leader must not be asked')),
      { confirmEnd: false },
    );
    expect(seqs).toEqual(stored);
    expect(asked).toEqual([]);
  });

  it('fails unavailable when the leader cannot be asked', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    await publish(tenant, 'kept', 1);
    await expect(readAll(session(tenant), () => Promise.reject(new Error('no leader')))).rejects.toMatchObject({
      code: 'unavailable',
      cause: { message: 'no leader' },
    });
  });
});

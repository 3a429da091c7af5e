import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM, REDACTED, startNatsServer } from '@ars/bus';
import type { Bus, EventPublisher, NatsServerHandle } from '@ars/bus';
import { NOTIFICATION_TYPES, getEvent } from '@ars/contracts';
import type { EventFrame } from '@ars/contracts';
import {
  publishMany,
  started,
  startIntGateway,
  startPublisher,
  subscribe,
  subscribeLive,
  triple,
} from './support/int-gateway.ts';
import type { IntGateway, Triple } from './support/int-gateway.ts';
import { SseReader } from './support/sse-reader.ts';

let dir: string;
let nats: NatsServerHandle;
let gateway: IntGateway;
/** A second gateway on the same NATS with tight limits: 1 s heartbeat, 2 s idle close, the smallest buffer. */
let strict: IntGateway;
let bus: Bus;
let publisher: EventPublisher;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ars-gateway-events-int-'));
  nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  gateway = await startIntGateway(nats.url, { ARS_EVENTS_HEARTBEAT_SECONDS: '30' });
  strict = await startIntGateway(nats.url, {
    ARS_EVENTS_HEARTBEAT_SECONDS: '1',
    ARS_EVENTS_IDLE_CLOSE_SECONDS: '2',
    ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES: '65536',
  });
  ({ bus, publisher } = await startPublisher(nats.url));
});

afterAll(async () => {
  await strict?.stop();
  await gateway?.stop();
  await bus?.close();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

const sequencesOf = (reader: SseReader) => reader.frames.map((block) => block.frame.sequence);

async function eventsConsumers(): Promise<number> {
  const info = await bus.jsm.streams.info(EVENTS_STREAM);
  return info.state.consumer_count;
}

async function post(name: string, token: string, body: Record<string, unknown>) {
  const route = name === 'search.events' ? '/v1/control/search.events' : `/v1/events/${name.split('.')[1]}`;
  const response = await fetch(`${gateway.baseUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ identity: {}, ...body }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('events.subscribe over JetStream: isolation and filters', () => {
  it('delivers only the verified triple, across tenants, users and sessions', async () => {
    const me = triple('iso');
    const others: Triple[] = [
      { ...me, tenant: `${me.tenant}-x` },
      { ...me, user: `${me.user}-x` },
      { ...me, session: `${me.session}-x` },
    ];
    const stream = await subscribeLive(gateway.baseUrl, await gateway.token(me));
    try {
      for (const other of others) await publisher.publish(started(other, 'theirs'));
      const mine = await publisher.publish(started(me, 'mine'));
      await stream.reader.frameCount(1);
      // A later event of another triple proves the earlier ones were skipped, not delayed.
      await publisher.publish(started(others[0]!, 'theirs-again'));
      const marker = await publisher.publish(started(me, 'marker'));
      await stream.reader.frameCount(2);
      expect(sequencesOf(stream.reader)).toEqual([mine.sequence, marker.sequence]);
      expect(stream.reader.frames.every((block) => block.frame.session === me.session)).toBe(true);
    } finally {
      stream.close();
    }
  });

  it('applies X-Service-Run, one type, a list of types, and both', async () => {
    const me = triple('filters');
    const token = await gateway.token(me);
    const byRun = await subscribeLive(gateway.baseUrl, token, { run: 'r2' });
    const oneType = await subscribeLive(gateway.baseUrl, token, { types: 'task.completed' });
    const list = await subscribeLive(gateway.baseUrl, token, { types: 'task.completed, task.failed' });
    const both = await subscribeLive(gateway.baseUrl, token, { run: 'r2', types: 'task.started,task.failed' });
    try {
      const emit = (run: string, type: string) =>
        publisher.publish({
          type,
          identity: { ...me, run },
          payload:
            type === 'task.started'
              ? { TaskID: run, PriorState: 'pending' }
              : type === 'task.failed'
                ? { TaskID: run, ErrorCode: 'x' }
                : { TaskID: run, NotifyOnComplete: false },
        });
      const e1 = await publisher.publish(started(me, 'r1'));
      const e2 = await publisher.publish(started(me, 'r2'));
      const e3 = await emit('r1', 'task.completed');
      const e4 = await emit('r2', 'task.failed');
      const e5 = await emit('r2', 'task.completed');
      await Promise.all([
        byRun.reader.frameCount(3),
        oneType.reader.frameCount(2),
        list.reader.frameCount(3),
        both.reader.frameCount(2),
      ]);
      expect(sequencesOf(byRun.reader)).toEqual([e2.sequence, e4.sequence, e5.sequence]);
      expect(sequencesOf(oneType.reader)).toEqual([e3.sequence, e5.sequence]);
      expect(sequencesOf(list.reader)).toEqual([e3.sequence, e4.sequence, e5.sequence]);
      expect(sequencesOf(both.reader)).toEqual([e2.sequence, e4.sequence]);
      expect(e1.sequence).toBeLessThan(e2.sequence);
    } finally {
      for (const stream of [byRun, oneType, list, both]) stream.close();
    }
  });

  it('delivers every notification.* type as the redacted map of its declared shape', async () => {
    const me = triple('redact');
    const stream = await subscribeLive(gateway.baseUrl, await gateway.token(me));
    const secret = 'Bearer abcdefghijklmnop';
    try {
      for (const type of NOTIFICATION_TYPES) {
        await publisher.publish({
          type,
          identity: { ...me, run: 'r' },
          payload: {
            Class: type,
            Severity: 'high',
            Summary: `mail alice@example.com with ${secret}`,
            DeepLink: 'https://user:hunter2@console.example/x?token=abc123',
            OriginEventType: 'task.failed',
            OriginEventSequence: 1,
            TaskID: 'task-1',
            GroupID: '',
            Members: [{ password: 'hunter2', note: 'key sk-abcdefghijklmnopqrstuv' }],
            MembersTruncated: false,
            MemberSucceeded: 0,
            MemberFailed: 1,
            MemberCancelled: 0,
          },
        });
      }
      await stream.reader.frameCount(NOTIFICATION_TYPES.length);
      const frames = stream.reader.frames.map((block) => block.frame);
      expect(frames.map((frame) => frame.type)).toEqual([...NOTIFICATION_TYPES]);
      for (const frame of frames) {
        const declared = Object.keys((getEvent(frame.type)!.payload as unknown as { shape: object }).shape);
        expect(Object.keys(frame.payload).sort()).toEqual(declared.sort());
        const text = JSON.stringify(frame.payload);
        for (const leaked of ['alice@example.com', 'abcdefghijklmnop', 'hunter2', 'abc123', 'sk-abcdefghij']) {
          expect(text).not.toContain(leaked);
        }
        expect(text).toContain(REDACTED);
      }
    } finally {
      stream.close();
    }
  });
});

describe('events.subscribe over JetStream: Last-Event-ID', () => {
  it('replays 10,000 events after a cursor with no gap and no duplicate, across the hand-over to live', async () => {
    const me = triple('replay');
    const token = await gateway.token(me);
    const stored = await publishMany(publisher, me, 10_000);
    const cursor = stored[1_233]!;
    const stream = await subscribe(gateway.baseUrl, token, { lastEventId: cursor });
    // More events while the replay runs: they arrive after it, once each.
    const during = publishMany(publisher, me, 500, 'during');
    await stream.reader.until((reader) => reader.named('replay.complete').length > 0, 25_000);
    const live = await during;
    try {
      const expected = [...stored.slice(1_234), ...live];
      await stream.reader.frameCount(expected.length, 20_000);
      expect(sequencesOf(stream.reader)).toEqual(expected);
      const complete = JSON.parse(stream.reader.named('replay.complete')[0]!.dataLines[0]!) as { sequence: number };
      expect(complete.sequence).toBeGreaterThanOrEqual(stored.at(-1)!);
    } finally {
      stream.close();
    }
  });

  it('answers a cursor older than the stream retains with bus.dropped, then continues from the first retained', async () => {
    const me = triple('stale');
    const token = await gateway.token(me);
    const old = await publishMany(publisher, me, 5, 'old');
    const kept = await publishMany(publisher, me, 3, 'kept');
    // Retention removed everything before `kept` (the oldest messages of the whole stream).
    await bus.jsm.streams.purge(EVENTS_STREAM, { seq: kept[0]! });
    const stream = await subscribeLive(gateway.baseUrl, token, { lastEventId: old[0]! });
    try {
      const [dropped, ...rest] = stream.reader.frames;
      expect(dropped?.frame).toMatchObject({
        type: 'bus.dropped',
        sequence: kept[0]! - 1,
        payload: { FromSeq: old[0]! + 1, ToSeq: kept[0]! - 1, DroppedCount: kept[0]! - old[0]! - 1 },
      });
      expect(rest.map((block) => block.frame.sequence)).toEqual(kept);
    } finally {
      stream.close();
    }
  });

  it('frees the replay consumer as soon as the client hangs up', async () => {
    const me = triple('hangup');
    const token = await gateway.token(me);
    await publishMany(publisher, me, 3_000);
    const before = await eventsConsumers();
    const stream = await subscribe(gateway.baseUrl, token, { lastEventId: 0 });
    await stream.reader.frameCount(10);
    stream.close();
    const deadline = Date.now() + 5_000;
    while ((await eventsConsumers()) > before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await eventsConsumers()).toBeLessThanOrEqual(before);
  });
});

describe('events.subscribe over JetStream: admin fan-in', () => {
  it('refuses admin=1 without admin or console:fleet with 403 scope_mismatch', async () => {
    const stream = await subscribe(gateway.baseUrl, await gateway.token(triple('noadmin')), { admin: true });
    expect(stream.status).toBe(403);
    expect(stream.refusal?.code).toBe('scope_mismatch');
  });

  it('fans in across tenants for console:fleet and publishes audit.admin_scope_used (shape 1)', async () => {
    const operator = triple('fleet');
    const a = triple('tenant-a');
    const b = triple('tenant-b');
    const stream = await subscribeLive(gateway.baseUrl, await gateway.token(operator, ['console:fleet']), {
      admin: true,
    });
    try {
      const ea = await publisher.publish(started(a, 'ra'));
      const eb = await publisher.publish(started(b, 'rb'));
      await stream.reader.until((reader) => sequencesOf(reader).includes(eb.sequence));
      const seen = stream.reader.frames.map((block) => block.frame);
      expect(seen.filter((frame) => [ea.sequence, eb.sequence].includes(frame.sequence)).map((f) => f.tenant)).toEqual([
        a.tenant,
        b.tenant,
      ]);
      const audits = await post('events.list', await gateway.token(operator), {
        filter: { types: ['audit.admin_scope_used'] },
      });
      const [audit] = audits.body.items as EventFrame[];
      expect(audit?.payload).toEqual({
        Tenant: operator.tenant,
        User: operator.user,
        Session: operator.session,
        SubscriberID: expect.any(Number),
      });
    } finally {
      stream.close();
    }
  });
});

/** A raw HTTP subscription whose response is never read: the socket backs up. */
function stalledSubscription(baseUrl: string, token: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${baseUrl}/v1/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.pause();
      resolve(res);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('events.subscribe over JetStream: connection limits', () => {
  it('drops a subscriber that falls too far behind with bus.dropped and closes it', async () => {
    const me = triple('slow');
    const response = await stalledSubscription(strict.baseUrl, await strict.token(me));
    const big = 'x'.repeat(8_000);
    let sequences: number[] = [];
    for (let round = 0; round < 8 && !response.complete; round++) {
      const batch = await Promise.all(
        Array.from({ length: 200 }, (_, i) => publisher.publish(started(me, `slow-${round}-${i}`, { TaskID: big }))),
      );
      sequences = [...sequences, ...batch.map((result) => result.sequence)];
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const reader = new SseReader(response);
    response.resume();
    await reader.waitEnd(20_000);
    const notice = reader.frames.at(-1)!;
    expect(notice.frame.type).toBe('bus.dropped');
    const payload = notice.frame.payload as Record<string, number>;
    const delivered = reader.frames.slice(0, -1).map((block) => block.frame.sequence);
    expect(payload.FromSeq).toBe(sequences[delivered.length]);
    expect(payload.ToSeq).toBeGreaterThanOrEqual(payload.FromSeq!);
    expect(delivered).toEqual(sequences.slice(0, delivered.length));
  });

  it('writes heartbeats and closes an idle subscription with bus.subscription_idle_closed', async () => {
    const me = triple('idle');
    const stream = await subscribeLive(strict.baseUrl, await strict.token(me));
    await stream.reader.waitEnd(10_000);
    expect(stream.reader.blocks.some((block) => block.comment === 'hb')).toBe(true);
    const notice = stream.reader.frames.at(-1)!;
    expect(notice.frame).toMatchObject({ type: 'bus.subscription_idle_closed', tenant: me.tenant });
    expect(notice.frame.payload.IdleSeconds).toBeGreaterThanOrEqual(2);
  });
});

describe('events.list, events.aggregate and search.events over JetStream', () => {
  let me: Triple;
  let token: string;
  let sequences: number[];

  beforeAll(async () => {
    me = triple('reads');
    token = await gateway.token(me);
    sequences = await publishMany(publisher, me, 120, 'reads');
    await publisher.publish(started({ ...me, session: `${me.session}-2` }, 'other-session'));
    await publisher.publish(started({ ...me, user: `${me.user}-2` }, 'other-user'));
  });

  it('pages through the caller’s events with no gap and no duplicate', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const answer = await post('events.list', token, {
        limit: 50,
        filter: { session: me.session },
        ...(cursor === undefined ? {} : { cursor }),
      });
      expect(answer.status).toBe(200);
      seen.push(...(answer.body.items as EventFrame[]).map((item) => item.sequence));
      cursor = answer.body.next_cursor as string | undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(sequences);
  });

  it('folds an omitted session to every session of the caller and refuses another user', async () => {
    const all = await post('events.list', token, { limit: 500 });
    expect((all.body.items as EventFrame[]).length).toBe(121);
    const refused = await post('events.list', token, { filter: { user: `${me.user}-2` } });
    expect(refused).toEqual({ status: 403, body: expect.objectContaining({ code: 'identity_scope_required' }) });
  });

  it('counts by type and bucket', async () => {
    const answer = await post('events.aggregate', token, { filter: { session: me.session }, bucket_seconds: 3600 });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ total: 120, by_type: { 'task.started': 120 } });
  });

  it('searches the payload text, newest first', async () => {
    const answer = await post('search.events', token, { query: 'reads-7', limit: 5 });
    expect(answer.status).toBe(200);
    const ids = (answer.body.items as { id: string }[]).map((item) => Number(item.id));
    expect(ids.length).toBe(5);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
  });
});

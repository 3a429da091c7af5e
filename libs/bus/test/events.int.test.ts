import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import { createMemoryLogger, initTelemetry, InMemorySpanExporter, withSpan } from '@ars/telemetry';
import type { Telemetry } from '@ars/telemetry';
import {
  DeliverPolicy,
  EMPTY_TOKEN,
  EVENT_RUN_HEADER,
  EVENTS_STREAM,
  REDACTED,
  connectBus,
  createEventPublisher,
  decodeEventMessage,
  decodeStoredEvent,
  encodeToken,
  ensureInfrastructure,
  eventFilterSubject,
  readEvents,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, EventPublisher, JsMsg, NatsServerHandle } from '../src/index.ts';
import { fakeRegistry, tempDir } from './helpers.ts';

const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVzLWhlcmU';

describe('event publisher', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let telemetry: Telemetry;
  let publisher: EventPublisher;
  const log = createMemoryLogger('events-test');

  /** A fresh session per test keeps tests apart on the shared stream. */
  function identity(run?: string) {
    return { tenant: 'acme', user: 'alice', session: randomUUID(), ...(run === undefined ? {} : { run }) };
  }

  /** Reads the stored messages of one session through an ordered consumer from `fromSeq`. */
  async function readSession(session: string, fromSeq = 1): Promise<JsMsg[]> {
    const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
      filter_subjects: eventFilterSubject({ session }),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: fromSeq,
    });
    const { num_pending: pending } = await consumer.info(true);
    const out: JsMsg[] = [];
    while (out.length < pending) {
      const msg = await consumer.next({ expires: 5_000 });
      if (msg === null) throw new Error(`expected ${pending} messages, got ${out.length}`);
      out.push(msg);
    }
    return out;
  }

  beforeAll(async () => {
    telemetry = initTelemetry({ serviceName: 'events-test', exporter: new InMemorySpanExporter() });
    dir = await tempDir('events');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'events-test' });
    await ensureInfrastructure(bus);
    publisher = createEventPublisher(bus, { source: 'events-test', logger: log.logger, registry: fakeRegistry() });
  });

  afterAll(async () => {
    await bus?.close();
    await telemetry?.shutdown();
    await server?.stop();
    await dir?.remove();
  });

  it('keeps the run out of the subject and carries it in the Ars-Run header', async () => {
    const session = randomUUID();
    const at = (run?: string) => ({ tenant: 'acme', user: 'alice', session, ...(run === undefined ? {} : { run }) });
    const payload = { TaskID: 't', PriorState: 'pending' };
    await publisher.publish({ type: 'task.started', identity: at('run-1'), payload });
    await publisher.publish({ type: 'task.started', identity: at('run-2'), payload });
    await publisher.publish({ type: 'task.started', identity: at(), payload });
    const stored = await readSession(session);
    expect(new Set(stored.map((m) => m.subject)).size).toBe(1);
    expect(stored.map((m) => m.headers?.get(EVENT_RUN_HEADER) ?? '')).toEqual([
      encodeToken('run-1'),
      encodeToken('run-2'),
      '',
    ]);
    const reader = await readEvents(bus, {
      filterSubject: eventFilterSubject({ session }),
      startSequence: stored[0]!.seq,
    });
    const records = [];
    for await (const record of reader) records.push(record);
    await reader.close();
    expect(records.map((r) => r.runToken)).toEqual([encodeToken('run-1'), encodeToken('run-2'), EMPTY_TOKEN]);
    expect(records.map((r) => decodeEventMessage(r).run)).toEqual(['run-1', 'run-2', '']);
  });

  /** Publishes `count` events in a fresh session; returns its filter subject and first sequence. */
  async function sessionOf(count: number): Promise<{ filterSubject: string; startSequence: number }> {
    const id = identity('run-r');
    const sequences = [];
    for (let i = 0; i < count; i++) {
      const { sequence } = await publisher.publish({
        type: 'task.started',
        identity: id,
        payload: { TaskID: 't', PriorState: 'pending' },
      });
      sequences.push(sequence);
    }
    return { filterSubject: eventFilterSubject({ session: id.session }), startSequence: sequences[0]! };
  }

  it('fails a range read whose consumer is gone with unavailable after stallMs, instead of waiting for ever', async () => {
    const range = await sessionOf(3);
    const reader = await readEvents(bus, { ...range, stallMs: 300 });
    expect(reader.pendingAtStart).toBe(3);
    // What a restarting server does to a memory-backed read consumer: it is gone before the first pull.
    for await (const consumer of bus.jsm.consumers.list(EVENTS_STREAM)) {
      if (consumer.config.filter_subject === range.filterSubject)
        await bus.jsm.consumers.delete(EVENTS_STREAM, consumer.name);
    }
    const started = Date.now();
    const records: unknown[] = [];
    const error = await (async () => {
      for await (const record of reader) records.push(record);
    })().catch((e: unknown) => e);
    await reader.close();
    expect(records).toEqual([]);
    expect(isServiceError(error) && error.code).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('does not count a slow caller as a stalled range read', async () => {
    const range = await sessionOf(3);
    const reader = await readEvents(bus, { ...range, stallMs: 100 });
    const sequences: number[] = [];
    for await (const record of reader) {
      sequences.push(record.seq);
      await sleep(300);
    }
    await reader.close();
    expect(sequences).toEqual([range.startSequence, range.startSequence + 1, range.startSequence + 2]);
  });

  it('stores the frame and reads it back from its sequence through an ordered consumer', async () => {
    const id = identity('task-1');
    const first = await publisher.publish({
      type: 'task.started',
      identity: id,
      payload: { TaskID: 'task-1', PriorState: 'pending' },
    });
    const second = await publisher.publish({
      type: 'task.started',
      identity: id,
      payload: { TaskID: 'task-1', PriorState: 'running' },
      occurredAt: '2030-01-02T03:04:05.000Z',
    });
    expect(second.sequence).toBeGreaterThan(first.sequence);

    const msgs = await readSession(id.session, second.sequence);
    expect(msgs.map((m) => decodeEventMessage(m))).toEqual([
      {
        type: 'task.started',
        sequence: second.sequence,
        occurred_at: '2030-01-02T03:04:05.000Z',
        tenant: 'acme',
        user: 'alice',
        session: id.session,
        run: 'task-1',
        payload: { TaskID: 'task-1', PriorState: 'running' },
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    ]);
  });

  it('sets Nats-Msg-Id to the event id and traceparent to the publishing span', async () => {
    const id = identity();
    const eventId = randomUUID();
    const traceId = await withSpan('emit', {}, async (span) => {
      await publisher.publish({
        type: 'task.started',
        identity: id,
        payload: { TaskID: 't', PriorState: 'p' },
        eventId,
      });
      return span.spanContext().traceId;
    });
    const [msg] = await readSession(id.session);
    expect(msg?.headers?.get('Nats-Msg-Id')).toBe(eventId);
    expect(msg?.headers?.get('traceparent')).toContain(traceId);
    expect(msg?.headers?.get('ars-source')).toBe('events-test');
    expect(decodeEventMessage(msg as JsMsg).run).toBe('');
    // The frame names the trace too (its `trace_id` member), read from the stored body.
    expect(decodeEventMessage(msg as JsMsg).trace_id).toBe(traceId);
  });

  it('publishes an event without a chosen id without Nats-Msg-Id, its random id in the body', async () => {
    const id = identity();
    await publisher.publish({ type: 'task.started', identity: id, payload: { TaskID: 't', PriorState: 'p' } });
    const [msg] = await readSession(id.session);
    expect(msg?.headers?.has('Nats-Msg-Id')).toBe(false);
    expect(decodeStoredEvent((msg as JsMsg).data).id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stores an event once when the same event id is published twice', async () => {
    const id = identity();
    const eventId = randomUUID();
    const input = { type: 'task.started', identity: id, payload: { TaskID: 't', PriorState: 'p' }, eventId };
    const a = await publisher.publish(input);
    const b = await publisher.publish(input);
    expect(b).toEqual({ sequence: a.sequence, duplicate: true });
    expect(a.duplicate).toBe(false);
    expect(await readSession(id.session)).toHaveLength(1);
  });

  it('delivers a notification payload as a redacted map of its declared keys', async () => {
    const id = identity('task-9');
    await publisher.publish({
      type: 'notification.task_failed',
      identity: id,
      payload: {
        Class: 'task.failed',
        Severity: 'error',
        Summary: `call failed with Authorization: Bearer ${JWT}; contact ops@example.com`,
        DeepLink: '/v1/runs/task-9?token=abc123',
        TaskID: 'task-9',
        Undeclared: 'sk-proj-AbCdEf0123456789abcdef',
      },
    });
    const [msg] = await readSession(id.session);
    const frame = decodeEventMessage(msg as JsMsg);
    expect(frame.type).toBe('notification.task_failed');
    expect(frame.payload).toEqual({
      Class: 'task.failed',
      Severity: 'error',
      Summary: `call failed with Authorization: ${REDACTED}; contact ${REDACTED}`,
      DeepLink: `/v1/runs/task-9?token=${REDACTED}`,
      TaskID: 'task-9',
    });
    expect(new TextDecoder().decode(msg?.data)).not.toContain('eyJ');
  });

  it('publishes audit.redaction_failed, never the raw payload, when redaction fails', async () => {
    const id = identity();
    const result = await publisher.publish({
      type: 'runtime.error',
      identity: id,
      payload: { Message: `leaked ${JWT}` },
    });
    const [msg] = await readSession(id.session);
    const frame = decodeEventMessage(msg as JsMsg);
    expect(frame.sequence).toBe(result.sequence);
    expect(frame.type).toBe('audit.redaction_failed');
    expect(frame.payload).toEqual({ OriginalType: 'runtime.error', Reason: expect.stringContaining('shape') });
    expect(new TextDecoder().decode(msg?.data)).not.toContain('leaked');
    expect(log.lines().some((l) => l.msg?.toString().startsWith('redaction failed'))).toBe(true);
  });

  it('refuses an unknown event type as internal and logs it', async () => {
    const error = await publisher
      .publish({ type: 'no.such.type', identity: identity(), payload: {} })
      .catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('internal');
    expect(log.lines().some((l) => l.eventType === 'no.such.type' && l.level === 50)).toBe(true);
  });

  it('refuses a payload its schema rejects as internal, publishing nothing', async () => {
    const id = identity();
    const error = await publisher
      .publish({ type: 'task.started', identity: id, payload: { TaskID: 42 } })
      .catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('internal');
    expect(await readSession(id.session)).toEqual([]);
  });
});

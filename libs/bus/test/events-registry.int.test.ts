import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DeliverPolicy,
  EVENTS_STREAM,
  REDACTED,
  connectBus,
  createEventPublisher,
  decodeEventMessage,
  ensureInfrastructure,
  eventFilterSubject,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, EventPublisher, NatsServerHandle } from '../src/index.ts';
import { createMemoryLogger } from '@ars/telemetry';
import { tempDir } from './helpers.ts';

describe('event publisher with the real registry of @ars/contracts', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let publisher: EventPublisher;

  async function lastFrame(session: string) {
    const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
      filter_subjects: eventFilterSubject({ session }),
      deliver_policy: DeliverPolicy.Last,
    });
    const msg = await consumer.next({ expires: 5_000 });
    if (msg === null) throw new Error('no event stored');
    return decodeEventMessage(msg);
  }

  beforeAll(async () => {
    dir = await tempDir('registry');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'registry-test' });
    await ensureInfrastructure(bus);
    publisher = createEventPublisher(bus, { source: 'registry-test', logger: createMemoryLogger().logger });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  it('publishes a safe event verbatim', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID(), run: 'task-1' };
    await publisher.publish({ type: 'task.started', identity, payload: { TaskID: 'task-1', PriorState: 'pending' } });
    expect(await lastFrame(identity.session)).toMatchObject({
      type: 'task.started',
      payload: { TaskID: 'task-1', PriorState: 'pending' },
    });
  });

  it('redacts a notification payload to its declared keys', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID(), run: 'task-2' };
    await publisher.publish({
      type: 'notification.task_failed',
      identity,
      payload: {
        Class: 'notification.task_failed',
        Severity: 'error',
        Summary: 'failed: Authorization: Bearer abcdefghijklmnop',
        DeepLink: '/v1/runs/task-2',
        OriginEventType: 'task.failed',
        OriginEventSequence: 7,
        TaskID: 'task-2',
        GroupID: '',
        Members: [],
        MembersTruncated: false,
        MemberSucceeded: 0,
        MemberFailed: 1,
        MemberCancelled: 0,
      },
    });
    const frame = await lastFrame(identity.session);
    expect(frame.type).toBe('notification.task_failed');
    expect(frame.payload.Summary).toBe(`failed: Authorization: ${REDACTED}`);
    expect(frame.payload.TaskID).toBe('task-2');
  });

  it('scrubs the Fields map of runtime.error', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID() };
    await publisher.publish({
      type: 'runtime.error',
      identity,
      payload: {
        Message: 'provider said: invalid key sk-proj-AbCdEf0123456789abcdef',
        Fields: { api_key: 'k', attempt: 2 },
      },
    });
    const frame = await lastFrame(identity.session);
    expect(frame).toMatchObject({
      type: 'runtime.error',
      payload: { Message: `provider said: invalid key ${REDACTED}`, Fields: { api_key: REDACTED, attempt: 2 } },
    });
  });

  it('publishes audit.redaction_failed for a runtime.error the redactor cannot handle', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID() };
    let deep: Record<string, unknown> = { secret: 'hunter2' };
    for (let i = 0; i < 40; i++) deep = { nested: deep };
    await publisher.publish({ type: 'runtime.error', identity, payload: { Message: 'deep', Fields: deep } });
    const frame = await lastFrame(identity.session);
    expect(frame.type).toBe('audit.redaction_failed');
    expect(frame.payload).toEqual({ OriginalType: 'runtime.error', Reason: expect.stringContaining('deeper') });
  });

  it('refuses an undeclared payload member as internal', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID() };
    const payload = { TaskID: 'x', PriorState: 'pending', Extra: 1 };
    await expect(publisher.publish({ type: 'task.started', identity, payload })).rejects.toMatchObject({
      code: 'internal',
    });
  });

  it('refuses an unknown event type as internal', async () => {
    const identity = { tenant: 't', user: 'u', session: randomUUID() };
    await expect(publisher.publish({ type: 'no.such.type', identity, payload: {} })).rejects.toMatchObject({
      code: 'internal',
    });
  });
});

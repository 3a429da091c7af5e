import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import { StreamPublishError } from '@ars/bus';
import { createLogger, createMemoryLogger } from '@ars/telemetry';
import type { EventPipeline, PipelineEvent } from '../../src/engine/event-pipeline.ts';
import { RunEvents } from '../../src/engine/run-events.ts';
import type { RunEventsOptions } from '../../src/engine/run-events.ts';
import type { StoredEventIds } from '../../src/engine/stored-events.ts';

/**
 * The run's event emitter when publishes fail: events that found no stream
 * are published again at the next flush (in order, under their ids as
 * `Nats-Msg-Id`, unless the stream holds them after all); refusals are
 * reported.
 */

const logger = createLogger({ name: 'test', level: 'silent' });
const identity = { tenant: 't', user: 'u', session: 's', run: 'r-1' };
const unreachable = () =>
  new ServiceError('unavailable', 'the event stream did not store the event', {
    cause: new StreamPublishError(408, 'no reply within 10000 ms'),
  });

/** A pipeline that stores every event (sequences from 101 on) unless `fails` says otherwise. */
function fakePipeline(fails: (event: PipelineEvent, attempt: number) => Error | undefined) {
  const calls: PipelineEvent[] = [];
  let sequence = 100;
  const pipeline: EventPipeline = {
    publish(event) {
      calls.push(event);
      const attempt = calls.filter((c) => c.type === event.type).length;
      const failure = fails(event, attempt);
      return failure === undefined ? Promise.resolve(++sequence) : Promise.reject(failure);
    },
  };
  return { pipeline, calls };
}

function emitter(pipeline: EventPipeline, storedIds: StoredEventIds, extra: Partial<RunEventsOptions> = {}) {
  return new RunEvents({ pipeline, identity, logger, storedIds, fromSequence: 10, ...extra });
}

const payload = (n: number) => ({ TaskID: 'r-1', N: n });

describe('RunEvents after failed publishes', () => {
  it('publishes again, in emission order and under their ids, the events that found no stream, skipping those stored after all', async () => {
    const { pipeline, calls } = fakePipeline((e, attempt) =>
      attempt === 1 && ['b', 'c', 'd'].includes(e.type) ? unreachable() : undefined,
    );
    const asked: number[] = [];
    const events = emitter(pipeline, async (_identity, from) => {
      asked.push(from);
      // The stream stored `c` although its acknowledgement never came.
      return new Set([calls.find((c) => c.type === 'c')?.id ?? '']);
    });
    for (const [n, type] of ['a', 'b', 'c', 'd'].entries()) events.emit(type, payload(n));
    await events.flush();

    expect(asked).toEqual([11]);
    const first = calls.slice(0, 4);
    const again = calls.slice(4);
    expect(again.map((c) => c.type)).toEqual(['b', 'd']);
    for (const retry of again) {
      const original = first.find((c) => c.type === retry.type);
      // The first try went without Nats-Msg-Id; the retry carries the event's own id, and keeps its time.
      expect(original?.eventId).toBeUndefined();
      expect(retry.eventId).toBe(original?.id);
      expect(retry.id).toBe(original?.id);
      expect(retry.occurredAt).toBe(original?.occurredAt);
      expect(retry.payload).toEqual(original?.payload);
    }
  });

  it('reads from the highest sequence acknowledged at the last complete flush', async () => {
    const { pipeline } = fakePipeline((e, attempt) =>
      e.type === 'later' && attempt === 1 ? unreachable() : undefined,
    );
    const asked: number[] = [];
    const events = emitter(pipeline, async (_identity, from) => {
      asked.push(from);
      return new Set();
    });
    events.emit('x', payload(1));
    events.emit('y', payload(2));
    await events.flush(); // 101 and 102 acknowledged
    events.emit('later', payload(3));
    await events.flush();
    expect(asked).toEqual([103]);
  });

  it('keeps trying while the stream cannot be read, then stores the event', async () => {
    const { pipeline, calls } = fakePipeline((e, attempt) =>
      e.type === 'b' && attempt === 1 ? unreachable() : undefined,
    );
    let reads = 0;
    const log = createMemoryLogger('test', 'info');
    const events = emitter(
      pipeline,
      async () => {
        reads += 1;
        if (reads < 3) throw new Error('JetStream not ready');
        return new Set();
      },
      { logger: log.logger },
    );
    events.emit('a', payload(1));
    events.emit('b', payload(2));
    await events.flush();
    expect(reads).toBe(3);
    expect(calls.map((c) => c.type)).toEqual(['a', 'b', 'b']);
    // The first failed try is logged (then one in ten), and the success.
    const messages = log.lines() as { msg: string; attempt?: number }[];
    expect(messages.filter((m) => m.msg.startsWith('run events not stored yet')).map((m) => m.attempt)).toEqual([0]);
    expect(messages.some((m) => m.msg === 'run events stored after the event stream came back')).toBe(true);
  });

  it('reports a refusal by the stream without trying it again', async () => {
    const refused = new ServiceError('internal', 'invalid payload for event b');
    const { pipeline, calls } = fakePipeline((e) => (e.type === 'b' ? refused : undefined));
    let reads = 0;
    const events = emitter(pipeline, async () => {
      reads += 1;
      return new Set();
    });
    events.emit('a', payload(1));
    events.emit('b', payload(2));
    await expect(events.flush()).rejects.toBe(refused);
    expect(reads).toBe(0);
    expect(calls.map((c) => c.type)).toEqual(['a', 'b']);
    // Reported once: the next flush has nothing to say.
    await expect(events.flush()).resolves.toBeUndefined();
  });

  it('gives up at the deadline and reports the failure', async () => {
    const { pipeline, calls } = fakePipeline((e) => (e.type === 'b' ? unreachable() : undefined));
    const events = emitter(pipeline, async () => new Set(), { restoreDeadlineMs: 300 });
    events.emit('b', payload(1));
    const started = Date.now();
    await expect(events.flush()).rejects.toMatchObject({ code: 'unavailable' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(calls.length).toBeGreaterThan(2);
    expect(new Set(calls.map((c) => c.id)).size).toBe(1);
  });

  it('drops the LLM, tool and planner events among them once sealed (the terminal event is under way), keeping the others', async () => {
    const { pipeline, calls } = fakePipeline((_e, attempt) => (attempt === 1 ? unreachable() : undefined));
    const events = emitter(pipeline, async () => new Set());
    events.emit('llm.completion.chunk', payload(1));
    events.emit('control.applied', payload(2));
    events.emit('planner.decision', payload(3));
    events.seal();
    await events.flush();
    expect(calls.map((c) => c.type)).toEqual([
      'llm.completion.chunk',
      'control.applied',
      'planner.decision',
      'control.applied',
    ]);
  });

  it('stops trying once the run is silenced (another executor owns it)', async () => {
    const { pipeline, calls } = fakePipeline((e) => (e.type === 'b' ? unreachable() : undefined));
    const events = emitter(pipeline, async () => new Set());
    events.emit('b', payload(1));
    const flushed = events.flush();
    setTimeout(() => events.silence(), 150);
    await flushed;
    const tries = calls.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(calls.length).toBe(tries);
  });
});

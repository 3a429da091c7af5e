import { describe, expect, it } from 'vitest';
import { createMemoryLogger } from '@ars/telemetry';
import { ANNOUNCE_RETRY_DELAYS_MS, createRunAnnouncements } from '../../src/handlers/run-announcements.ts';
import type { TaskRecord } from '../../src/domain/task.ts';

const task = (id: string) => ({ task_id: id }) as TaskRecord;

/** pino's `warn` level. */
const WARN = 40;

/** A stream that refuses the first `failures` publishes of each task, then takes them; the test sees every try. */
function flakyStreams(failures: number) {
  const tries: string[] = [];
  const taken: string[] = [];
  const send = async (announced: TaskRecord): Promise<void> => {
    tries.push(announced.task_id);
    if (tries.filter((id) => id === announced.task_id).length <= failures) throw new Error('no responders');
    taken.push(announced.task_id);
  };
  return { send, tries, taken };
}

describe('run announcements', () => {
  it('returns before the announcement is sent, and sends it once when the streams take it', async () => {
    const streams = flakyStreams(0);
    const memory = createMemoryLogger('t');
    const announcements = createRunAnnouncements({ logger: memory.logger, send: streams.send });
    expect(announcements.announce(task('a'))).toBeUndefined();
    announcements.announce(task('b'));
    await announcements.stop();
    expect(streams.taken).toEqual(['a', 'b']);
    expect(memory.lines().filter((line) => Number(line['level']) >= WARN)).toEqual([]);
  });

  it('retries a failed announcement after each delay until it lands', async () => {
    const streams = flakyStreams(2);
    const memory = createMemoryLogger('t');
    const announcements = createRunAnnouncements({
      logger: memory.logger,
      send: streams.send,
      retryDelaysMs: [1, 1, 1],
    });
    announcements.announce(task('a'));
    await expect.poll(() => streams.taken).toEqual(['a']);
    expect(streams.tries).toEqual(['a', 'a', 'a']);
    expect(memory.lines().find((line) => line['msg'] === 'run announced after retries')).toMatchObject({
      taskId: 'a',
      attempts: 3,
    });
  });

  it('leaves a run to the stale-run sweeper with a warning once every retry failed', async () => {
    const streams = flakyStreams(Number.POSITIVE_INFINITY);
    const memory = createMemoryLogger('t');
    const announcements = createRunAnnouncements({ logger: memory.logger, send: streams.send, retryDelaysMs: [1, 1] });
    announcements.announce(task('a'));
    await announcements.stop();
    // stop cut the waits short: at least the first try, at most the three the delays allow.
    expect(streams.tries.length).toBeGreaterThanOrEqual(1);
    expect(streams.tries.length).toBeLessThanOrEqual(3);
    expect(streams.taken).toEqual([]);
    const warning = memory.lines().find((line) => line['level'] === WARN);
    expect(warning).toMatchObject({
      taskId: 'a',
      msg: 'announcing a started run failed; the stale-run sweeper queues it',
    });
  });

  it('gives up after the last delay without stop', async () => {
    const streams = flakyStreams(Number.POSITIVE_INFINITY);
    const memory = createMemoryLogger('t');
    createRunAnnouncements({ logger: memory.logger, send: streams.send, retryDelaysMs: [1, 1] }).announce(task('a'));
    await expect.poll(() => memory.lines().some((line) => line['level'] === WARN)).toBe(true);
    expect(streams.tries).toEqual(['a', 'a', 'a']);
  });

  it('waits, on stop, for an announcement in flight instead of dropping it', async () => {
    let release: () => void = () => undefined;
    const taken: string[] = [];
    const announcements = createRunAnnouncements({
      logger: createMemoryLogger('t').logger,
      send: (announced) =>
        new Promise<void>((resolve) => {
          release = () => {
            taken.push(announced.task_id);
            resolve();
          };
        }),
    });
    announcements.announce(task('a'));
    let stopped = false;
    const stopping = announcements.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(taken).toEqual(['a']);
    await announcements.stop();
  });

  it('retries for longer than a NATS stream failover (7–8 s) by default, under 20 s', () => {
    const total = ANNOUNCE_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(8_000);
    expect(total).toBeLessThan(20_000);
  });
});

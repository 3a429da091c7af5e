import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ars/telemetry';
import { startPeriodic } from '../src/periodic.ts';

const logger = createLogger({ name: 'periodic-test', level: 'silent' });

describe('startPeriodic', () => {
  it('runs a pass every interval, never two at once, and keeps going after a failed one', async () => {
    let running = 0;
    let overlapped = false;
    let passes = 0;
    const job = startPeriodic(
      async () => {
        running += 1;
        overlapped ||= running > 1;
        passes += 1;
        await sleep(15);
        running -= 1;
        if (passes === 1) throw new Error('first pass fails');
      },
      { name: 'test', intervalMs: 5, logger, runAtStart: true },
    );
    await Promise.all([job.runNow(), job.runNow()]);
    await sleep(80);
    await job.stop();
    expect(overlapped).toBe(false);
    expect(passes).toBeGreaterThanOrEqual(4);
  });

  it('waits for the pass in flight on stop, and runs none after', async () => {
    let finished = 0;
    const job = startPeriodic(
      async () => {
        await sleep(30);
        finished += 1;
      },
      { name: 'test', intervalMs: 10, logger, runAtStart: true },
    );
    await sleep(5);
    await job.stop();
    expect(finished).toBe(1);
    await sleep(50);
    expect(finished).toBe(1);
    await job.runNow();
    expect(finished).toBe(1);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryLogger } from '@ars/telemetry';
import type { CostRecord } from '../../src/engine/governance.ts';
import { COST_HOLD_MS, RunCosts } from '../../src/engine/run-costs.ts';

/**
 * A run's LLM call costs: held for the next admission to carry, sent
 * together when none takes them in time or when the run has no next call,
 * and every record sent is awaited before the run ends.
 */

const cost = (step: number): CostRecord => ({
  model: 'scripted',
  costUsd: 0.5,
  tokensIn: 10,
  tokensOut: 5,
  callId: `run:${step}:1:claim`,
});

function costs(send: (records: readonly CostRecord[]) => Promise<void> = async () => undefined) {
  const sent: CostRecord[][] = [];
  const log = createMemoryLogger('run-costs-test');
  const run = new RunCosts((records) => {
    sent.push([...records]);
    return send(records);
  }, log.logger);
  return { run, sent, log };
}

describe('RunCosts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the held costs to the next admission, and then nothing is sent on its own', async () => {
    const { run, sent } = costs();
    run.hold(cost(1));
    expect(run.take()).toEqual([cost(1)]);
    expect(run.take()).toEqual([]);
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS * 2);
    expect(sent).toEqual([]);
  });

  it('sends the costs no admission took together, once, the hold time after the oldest', async () => {
    const { run, sent } = costs();
    run.hold(cost(1));
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS / 2);
    run.hold(cost(2));
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS / 2 - 1);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([[cost(1), cost(2)]]);
    expect(run.take()).toEqual([]);
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS * 2);
    expect(sent).toHaveLength(1);
  });

  it('holds a cost after a send afresh, for a hold time of its own', async () => {
    const { run, sent } = costs();
    run.hold(cost(1));
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS);
    run.hold(cost(2));
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS - 1);
    expect(sent).toEqual([[cost(1)]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([[cost(1)], [cost(2)]]);
  });

  it('flush sends the held costs in one request and settles only once every record sent was answered', async () => {
    const answers: (() => void)[] = [];
    const { run, sent } = costs(() => new Promise<void>((resolve) => answers.push(resolve)));
    run.hold(cost(1));
    await vi.advanceTimersByTimeAsync(COST_HOLD_MS);
    run.hold(cost(2));
    run.hold(cost(3));
    let flushed = false;
    const flushing = run.flush().then(() => (flushed = true));
    expect(sent).toEqual([[cost(1)], [cost(2), cost(3)]]);
    answers[1]?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(flushed).toBe(false);
    answers[0]?.();
    await flushing;
    expect(flushed).toBe(true);
  });

  it('sends nothing at a flush with nothing held', async () => {
    const { run, sent } = costs();
    await run.flush();
    expect(sent).toEqual([]);
  });

  it('logs a record that failed and still settles: a cost not recorded never fails the run', async () => {
    const { run, log } = costs(async () => {
      throw new Error('governance timed out');
    });
    run.hold(cost(1));
    await expect(run.flush()).resolves.toBeUndefined();
    const warned = log.lines().filter((l) => l.msg === 'LLM call cost not recorded with governance');
    expect(warned).toHaveLength(1);
    expect(warned[0]?.level).toBe(40);
  });

  it('awaits a record deferred by the caller (an admission that failed after carrying a cost)', async () => {
    const { run } = costs();
    let answer!: () => void;
    run.defer(new Promise<void>((resolve) => (answer = resolve)));
    let settled = false;
    const pending = run.pending.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    answer();
    await pending;
    expect(settled).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { createLogger } from '@ars/telemetry';
import { RunLeaseLost, RunLoop } from '../../src/engine/run-loop.ts';
import type { RunDeps } from '../../src/engine/run-loop.ts';

const deps = { logger: createLogger({ name: 'run-lease-test', level: 'silent' }) } as unknown as RunDeps;

/** A run loop whose lease answers `held()`. */
function runWith(held: () => boolean): RunLoop {
  return new RunLoop('task-1', deps, 1, held);
}

describe("a run's lease checks", () => {
  it('let a run act while its lease is held, and stop it for good once it is not', () => {
    let held = true;
    const run = runWith(() => held);
    expect(run.leaseHeld()).toBe(true);
    expect(() => run.assertLease()).not.toThrow();
    held = false;
    expect(run.leaseHeld()).toBe(false);
    expect(run.exitRequest).toBe('lost');
    expect(run.interrupted).toBe(true);
    held = true;
    // Lost is lost: a later answer of the lease manager does not bring the run back.
    expect(run.leaseHeld()).toBe(false);
    expect(() => run.assertLease()).toThrow(RunLeaseLost);
  });

  it('still narrate for a run this executor ended or handed back, whose lease it let go itself', () => {
    const ended = runWith(() => false);
    ended.terminated = true;
    expect(ended.leaseHeld()).toBe(true);
    expect(ended.exitRequest).toBeUndefined();
    const handedBack = runWith(() => false);
    handedBack.exitRequest = 'handback';
    expect(handedBack.leaseHeld()).toBe(true);
  });

  it('refuse a store write without the lease even for a run already ending (the terminal mark)', () => {
    const run = runWith(() => false);
    run.terminated = true;
    expect(() => run.assertLease()).toThrow(RunLeaseLost);
    expect(run.exitRequest).toBe('lost');
  });
});

import { describe, expect, it } from 'vitest';
import { RunLeaseLost, RunSignals } from '../../src/engine/run-signals.ts';

/** A run's signals whose lease answers `held()`. */
function runWith(held: () => boolean): RunSignals {
  return new RunSignals('task-1', { holdsLease: held });
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
    ended.markTerminated();
    expect(ended.leaseHeld()).toBe(true);
    expect(ended.exitRequest).toBeUndefined();
    const handedBack = runWith(() => false);
    handedBack.requestHandback();
    expect(handedBack.leaseHeld()).toBe(true);
  });

  it('refuse a store write without the lease even for a run already ending (the terminal mark)', () => {
    const run = runWith(() => false);
    run.markTerminated();
    expect(() => run.assertLease()).toThrow(RunLeaseLost);
    expect(run.exitRequest).toBe('lost');
  });
});

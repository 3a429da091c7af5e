import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection, Store, StoreDocument } from '@ars/store';
import { RUN_STATE_COLLECTIONS } from '../../src/store/run-state.repository.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * `runtime.error` (a run an unexpected engine error ended `internal`) and
 * `runtime.run_cancelled` (a hard cancel and the controls it dropped), with a
 * store that fails a checkpoint write with a plain error, or holds each
 * control receipt back so that controls queue behind a cancel.
 */

const SECRET = 'password=hunter2';

interface Faults {
  /** Fail the next checkpoint write (a plain Error carrying a secret). */
  failCheckpoint: boolean;
  /** Hold each control receipt write back this long, in ms. */
  receiptDelayMs: number;
}

function faultyStore(store: Store, faults: Faults): Store {
  const wrap = <T extends StoreDocument>(name: string, collection: Collection<T>): Collection<T> =>
    new Proxy(collection, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        const call = (args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        return async (...args: unknown[]) => {
          const set = (args[1] as { $set?: Record<string, unknown> } | undefined)?.$set;
          const checkpoint = key === 'updateOne' && set?.step !== undefined && set.terminal === undefined;
          if (name === RUN_STATE_COLLECTIONS.runStates && checkpoint && faults.failCheckpoint) {
            faults.failCheckpoint = false;
            throw new Error(`checkpoint refused: ${SECRET}`);
          }
          if (name === RUN_STATE_COLLECTIONS.controlReceipts && faults.receiptDelayMs > 0) {
            await sleep(faults.receiptDelayMs);
          }
          return call(args);
        };
      },
    });
  return new Proxy(store, {
    get(target, key) {
      if (key === 'collection') return (name: string) => wrap(name, target.collection(name));
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('runtime events', () => {
  let h: EngineHarness;
  const faults: Faults = { failCheckpoint: false, receiptDelayMs: 0 };

  beforeAll(async () => {
    h = await startEngineHarness({}, { wrapStore: (store) => faultyStore(store, faults) });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('publishes a redacted runtime.error before task.failed when an engine error ends a run internal', async () => {
    faults.failCheckpoint = true;
    const { watch } = await h.start(newCaller(), { query: '#script tool:echo{"a":1};finish:done' });
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal).toMatchObject({ type: 'task.failed', payload: { ErrorCode: 'internal' } });
    const error = watch.events.find((e) => e.type === 'runtime.error');
    expect(error?.sequence).toBeLessThan(terminal.sequence);
    expect(error?.payload).toEqual({
      Message: 'unexpected engine error; the run failed internal',
      Fields: { ErrorClass: 'Error', ErrorCode: 'internal', Step: 1 },
    });
    expect(JSON.stringify(watch.events)).not.toContain('hunter2');
  });

  it('reports the controls a hard cancel left queued in runtime.run_cancelled', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:wait{"ms":20000};finish:ok' });
    await watch.until((e) => e.type === 'tool.invoked');
    faults.receiptDelayMs = 300;
    try {
      await h.control('cancel', taskId, caller, { hard: true });
      await h.control('redirect', taskId, caller, { goal: 'second' });
      await h.control('redirect', taskId, caller, { goal: 'third' });
      const terminal = await watch.terminal();
      const cancelled = await watch.until((e) => e.type === 'runtime.run_cancelled');
      watch.stop();
      expect(terminal.type).toBe('task.cancelled');
      expect(Object.keys(cancelled.payload).sort()).toEqual(['CancelledAt', 'DroppedEnvelopeCount', 'RunID']);
      expect(cancelled.payload.RunID).toBe(taskId);
      // The third control is queued when the run ends; the second may have begun by then.
      expect(cancelled.payload.DroppedEnvelopeCount).toBeGreaterThanOrEqual(1);
      expect(cancelled.payload.DroppedEnvelopeCount).toBeLessThanOrEqual(2);
      expect(cancelled.sequence).toBeLessThan(terminal.sequence);
    } finally {
      faults.receiptDelayMs = 0;
    }
  });

  it('publishes no runtime.run_cancelled for a cancel at the next boundary', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:wait{"ms":200};finish:ok' });
    await watch.until((e) => e.type === 'tool.invoked');
    await h.control('cancel', taskId, caller, {});
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.type).toBe('task.cancelled');
    expect(watch.types()).not.toContain('runtime.run_cancelled');
  });
});

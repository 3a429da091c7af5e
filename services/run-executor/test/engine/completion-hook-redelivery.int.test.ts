import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '@ars/bus';
import { storedEvents } from '@ars/service-kit/testing';
import { StoreError } from '@ars/store';
import type { Collection, Store, StoreDocument } from '@ars/store';
import { createRunStateRepository, RUN_STATE_COLLECTIONS } from '../../src/store/run-state.repository.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * The completion hook runs once per run across a redelivery: the executor
 * dies after the hook, before dropping the run state; the run is taken
 * again 5 s later, past the stream's duplicate window (cut to 1 s), and
 * re-publishes nothing and runs no hook again.
 */

const DUPLICATE_WINDOW_NS = 1_000 * 1_000_000;

/** The store, failing the next run-state removal once (a retryable death) while `armed.on`. */
function dyingStore(store: Store, armed: { on: boolean }): Store {
  const wrap = <T extends StoreDocument>(name: string, collection: Collection<T>): Collection<T> =>
    new Proxy(collection, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (armed.on && name === RUN_STATE_COLLECTIONS.runStates && key === 'deleteOne') {
            armed.on = false;
            throw new StoreError('the executor died before dropping the run state', { retryable: true });
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
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

describe('completion hook across a redelivery', { timeout: 40_000 }, () => {
  let h: EngineHarness;
  const armed = { on: false };

  beforeAll(async () => {
    h = await startEngineHarness({}, { wrapStore: (store) => dyingStore(store, armed) });
    h.agentConfigs.set('hooked', { completion_hook: { tool: 'echo' } });
    await h.bus.jsm.streams.update(EVENTS_STREAM, { duplicate_window: DUPLICATE_WINDOW_NS });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('runs the hook once when the executor dies after it and the run is taken again', async () => {
    const runStates = createRunStateRepository(h.store);
    const caller = newCaller();
    armed.on = true;
    const { taskId, watch } = await h.start(caller, { query: '#script finish:done', agent_id: 'hooked' });
    await watch.until((e) => e.type === 'run.hook_dispatched');
    watch.stop();
    const deadline = Date.now() + 20_000;
    while (armed.on && Date.now() < deadline) await sleep(20);
    expect(armed.on).toBe(false);
    while ((await runStates.load(taskId)) !== null && Date.now() < deadline) await sleep(100);
    expect(await runStates.load(taskId)).toBeNull();
    const stored = await storedEvents(h.bus, { ...caller, run: taskId });
    const types = stored.map((e) => e.type);
    expect(types.filter((t) => t.startsWith('run.hook_'))).toEqual(['run.hook_dispatched']);
    expect(types.filter((t) => t === 'task.completed')).toHaveLength(1);
  });
});

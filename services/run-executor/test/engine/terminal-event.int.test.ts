import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { decodeStoredEvent, encodeToken, EVENTS_STREAM, eventFilterSubject, readEvents } from '@ars/bus';
import { StoreError } from '@ars/store';
import type { Collection, Store, StoreDocument } from '@ars/store';
import type { TaskRecord } from '../../src/domain/task.ts';
import { createRunStateRepository, RUN_STATE_COLLECTIONS } from '../../src/store/run-state.repository.ts';
import type { RunStateRepository } from '../../src/store/run-state.repository.ts';
import { TASKS_COLLECTION } from '../../src/store/task.repository.ts';
import { newCaller, startEngineHarness, TERMINAL_TYPES } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * Exactly one terminal event per run when its executor dies between the
 * writes that end it. A death is a store write that fails once, landed or
 * not, as if the process had stopped there; the run is then retried on this
 * executor 5 s later, which takes the path of a redelivery to another one.
 * Redeliveries come after the stream's duplicate window: the test cuts the
 * window to 1 s and moves the task's `ended_at` back 3 minutes.
 */

const TERMINAL_STATUSES = ['complete', 'failed', 'cancelled'];
const DUPLICATE_WINDOW_NS = 1_000 * 1_000_000;
const ENDED_LONG_AGO_MS = 3 * 60_000;

/** One store write that fails, once. */
interface Crash {
  readonly collection: string;
  readonly method: 'updateOne' | 'deleteOne' | 'findOneAndUpdate';
  /** True: the write lands, then the executor dies; false: it dies before the write. */
  readonly lands: boolean;
  readonly matches: (filter: Record<string, unknown>, update: Record<string, unknown> | undefined) => boolean;
  /** Resolves once the crash happened. */
  readonly happened: Promise<void>;
  fire(): void;
}

function crash(spec: Omit<Crash, 'happened' | 'fire'>): Crash {
  let fire = (): void => undefined;
  const happened = new Promise<void>((resolve) => (fire = resolve));
  return { ...spec, happened, fire };
}

/** The write of `markTerminal`. */
const markTerminalWrite = (lands: boolean): Crash =>
  crash({
    collection: TASKS_COLLECTION,
    method: 'updateOne',
    lands,
    matches: (_filter, update) => {
      const status = (update?.$set as Record<string, unknown> | undefined)?.status;
      return TERMINAL_STATUSES.includes(String(status));
    },
  });

/** The write that drops a run state once the terminal event is out. */
const runStateRemoval = (): Crash =>
  crash({
    collection: RUN_STATE_COLLECTIONS.runStates,
    method: 'deleteOne',
    lands: false,
    matches: () => true,
  });

/** The service's store, failing the armed crash's write (the next one matching). */
function crashingStore(store: Store, armed: Crash[]): Store {
  const wrap = <T extends StoreDocument>(name: string, collection: Collection<T>): Collection<T> =>
    new Proxy(collection, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const [filter, update] = args as [Record<string, unknown>, Record<string, unknown> | undefined];
          const index = armed.findIndex((c) => c.collection === name && c.method === key && c.matches(filter, update));
          const hit = index < 0 ? undefined : armed.splice(index, 1)[0];
          if (hit === undefined) return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (hit.lands) await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          hit.fire();
          // A store error is retried like a redelivery even before the run ended (a plain error would fail it).
          throw new StoreError(`the executor died at ${name}.${String(key)}`, { retryable: true });
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

describe('exactly one terminal event across executor deaths', { timeout: 40_000 }, () => {
  let h: EngineHarness;
  let runStates: RunStateRepository;
  const armed: Crash[] = [];

  beforeAll(async () => {
    h = await startEngineHarness({}, { wrapStore: (store) => crashingStore(store, armed) });
    runStates = createRunStateRepository(h.store);
    await h.bus.jsm.streams.update(EVENTS_STREAM, { duplicate_window: DUPLICATE_WINDOW_NS });
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** The run's events of `types` as the stream stores them, duplicates included. */
  async function storedOfTypes(caller: VerifiedIdentity, taskId: string, types: readonly string[]): Promise<string[]> {
    const reader = await readEvents(h.bus, { filterSubject: eventFilterSubject(caller) });
    const found: string[] = [];
    try {
      for await (const record of reader) {
        if (record.runToken !== encodeToken(taskId)) continue;
        const { type } = decodeStoredEvent(record.data);
        if (types.includes(type)) found.push(type);
      }
    } finally {
      await reader.close();
    }
    return found;
  }

  const storedTerminals = (caller: VerifiedIdentity, taskId: string) => storedOfTypes(caller, taskId, TERMINAL_TYPES);
  const storedStarts = async (caller: VerifiedIdentity, taskId: string) =>
    (await storedOfTypes(caller, taskId, ['task.started'])).length;

  /** Waits until the run's state is gone: whatever ended the run is done, its terminal event stored. */
  async function runStateDropped(taskId: string): Promise<void> {
    for (let i = 0; i < 1_000; i++) {
      if ((await runStates.load(taskId)) === null) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the run state of ${taskId} stayed`);
  }

  /** What the task row looks like once the redelivery is later than the duplicate window. */
  async function endedLongAgo(taskId: string): Promise<void> {
    const endedAt = new Date(Date.now() - ENDED_LONG_AGO_MS).toISOString();
    await h.store.collection<TaskRecord>(TASKS_COLLECTION).updateOne({ _id: taskId }, { $set: { ended_at: endedAt } });
  }

  it('ends a run with one terminal event when nothing went wrong, and drops its run state', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:done' });
    await watch.terminal();
    watch.stop();
    await runStateDropped(taskId);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.completed']);
  });

  it('publishes the terminal event of a run whose executor died after marking the task and before publishing', async () => {
    const death = markTerminalWrite(true);
    armed.push(death);
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:done' });
    await death.happened;
    await endedLongAgo(taskId);
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, NotifyOnComplete: false });
    await runStateDropped(taskId);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.completed']);
  });

  it('publishes it from the task row when no run state kept the outcome (a run ended by an earlier version)', async () => {
    const death = markTerminalWrite(true);
    armed.push(death);
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:done' });
    await death.happened;
    await endedLongAgo(taskId);
    await h.store.collection(RUN_STATE_COLLECTIONS.runStates).deleteOne({ _id: taskId });
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(await storedTerminals(caller, taskId)).toEqual(['task.completed']);
  });

  it('does not publish the terminal event again when the executor died after publishing it, past the duplicate window', async () => {
    const death = runStateRemoval();
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:wait{ms:60000};finish:done' });
    await watch.until((e) => e.type === 'tool.invoked');
    armed.push(death);
    await h.control('cancel', taskId, caller, { hard: true });
    await death.happened;
    await endedLongAgo(taskId);
    expect((await watch.terminal()).type).toBe('task.cancelled');
    watch.stop();
    await runStateDropped(taskId);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.cancelled']);
  });

  it('ends a run with its saved outcome when the executor died before marking the task, without replaying its last step', async () => {
    const death = markTerminalWrite(false);
    armed.push(death);
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:done' });
    await death.happened;
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    await runStateDropped(taskId);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.completed']);
    const finishes = watch.events.filter((e) => e.type === 'planner.decision' && e.payload.DecisionKind === 'Finish');
    expect(finishes).toHaveLength(1);
  });

  it('ends the open pauses of a run before its terminal event is published', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:sensitive_action{amount:1};finish:ok' });
    await watch.until((e) => e.type === 'tool.approval_requested');
    expect(await runStates.openPauses(taskId)).toHaveLength(1);
    await h.control('cancel', taskId, caller, { hard: true });
    expect((await watch.terminal()).type).toBe('task.cancelled');
    // Whoever sees the terminal event finds no pause of the run left open.
    expect(await runStates.openPauses(taskId)).toEqual([]);
    watch.stop();
  });

  it('ends the open pauses of a run whose executor died after marking the task', async () => {
    const death = markTerminalWrite(true);
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:sensitive_action{amount:1};finish:ok' });
    await watch.until((e) => e.type === 'tool.approval_requested');
    armed.push(death);
    await h.control('cancel', taskId, caller, { hard: true });
    await death.happened;
    await endedLongAgo(taskId);
    expect(await runStates.openPauses(taskId)).toHaveLength(1);
    expect((await watch.terminal(20_000)).type).toBe('task.cancelled');
    watch.stop();
    await runStateDropped(taskId);
    expect(await runStates.openPauses(taskId)).toEqual([]);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.cancelled']);
  });

  it('publishes task.started of a run whose executor died after marking it running, however late the redelivery', async () => {
    const death = crash({
      collection: TASKS_COLLECTION,
      method: 'findOneAndUpdate',
      lands: true,
      matches: (_filter, update) => (update?.$set as Record<string, unknown> | undefined)?.status === 'running',
    });
    armed.push(death);
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:done' });
    await death.happened;
    // Past the duplicate window, as a redelivery long after the start would be.
    const startedAt = new Date(Date.now() - ENDED_LONG_AGO_MS).toISOString();
    await h.store
      .collection<TaskRecord>(TASKS_COLLECTION)
      .updateOne({ _id: taskId }, { $set: { started_at: startedAt } });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    await runStateDropped(taskId);
    expect(await storedStarts(caller, taskId)).toBe(1);
    expect(await storedTerminals(caller, taskId)).toEqual(['task.completed']);
  });

  it('does not publish task.started again for a run redelivered after it was stored', async () => {
    const death = crash({
      collection: RUN_STATE_COLLECTIONS.runStates,
      method: 'updateOne',
      lands: false,
      matches: () => true,
    });
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script tool:wait{ms:300};finish:done' });
    await watch.until((e) => e.type === 'task.started');
    armed.push(death);
    await death.happened;
    await h.store
      .collection<TaskRecord>(TASKS_COLLECTION)
      .updateOne({ _id: taskId }, { $set: { started_at: new Date(Date.now() - ENDED_LONG_AGO_MS).toISOString() } });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    await runStateDropped(taskId);
    expect(await storedStarts(caller, taskId)).toBe(1);
  });
});

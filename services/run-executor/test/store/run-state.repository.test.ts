import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import { sessionKey } from '../../src/domain/session-key.ts';
import type { Store } from '@ars/store';
import type { ChatMessage } from '../../src/providers/provider.ts';
import { createRunStateRepository, RUN_STATE_COLLECTIONS } from '../../src/store/run-state.repository.ts';
import type { Checkpoint, RunStateRecord, RunStateRepository } from '../../src/store/run-state.repository.ts';

const owner = { tenant: 't', user: 'u', session: 's' };

/** Arguments a model may well write, with field names a document store refuses. */
const HOSTILE_ARGS = { $ref: '#/a', 'file.name': 'notes.txt', '': 'empty', nested: { '$x.y': [{ 'a.b': 1 }] } };

function checkpointWith(messages: ChatMessage[]): Checkpoint {
  return { step: 1, messages, completed_calls: [], pending_call: null, inputs_consumed: 0, cost_usd: 0 };
}

const toolCallMessages: ChatMessage[] = [
  { role: 'user', content: 'go' },
  { role: 'assistant', content: '', tool_call: { id: 'call_1', name: 'echo', args: HOSTILE_ARGS } },
  { role: 'tool', content: '{}', tool_call_id: 'call_1' },
];

describe('run state repository (embedded, in memory)', () => {
  let store: Store;
  let runStates: RunStateRepository;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'run_states_test', inMemory: true });
    runStates = createRunStateRepository(store);
    await runStates.init();
  });

  afterEach(async () => {
    await store.close();
  });

  it('checkpoints and loads a tool call whose arguments hold field names a document store refuses', async () => {
    await runStates.checkpoint('r1', owner, checkpointWith(toolCallMessages));
    expect((await runStates.load('r1'))?.messages).toEqual(toolCallMessages);
    await runStates.finish('r1', owner, { status: 'complete' }, checkpointWith(toolCallMessages), 'done');
    expect(await runStates.load('r1')).toMatchObject({ messages: toolCallMessages, answer: 'done' });
  });

  it('loads checkpoints written before, with the arguments as an object', async () => {
    const legacy = { role: 'assistant', content: '', tool_call: { id: 'call_1', name: 'echo', args: { a: 1 } } };
    await store.collection<RunStateRecord>(RUN_STATE_COLLECTIONS.runStates).insertOne({
      _id: 'r2',
      task_id: 'r2',
      ...owner,
      ...checkpointWith([legacy as ChatMessage]),
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    expect((await runStates.load('r2'))?.messages).toEqual([legacy]);
  });

  it('keeps every turn of runs of one session ending at once, a replayed turn once, the last ten', async () => {
    const turn = (n: number, answer = `a${n}`) => ({
      task_id: `t${n}`,
      query: `q${n}`,
      answer,
      at: `2026-01-01T00:00:0${n % 10}Z`,
    });
    await Promise.all([1, 2, 3, 4].map((n) => runStates.appendSessionTurn(owner, turn(n))));
    expect((await runStates.sessionTurns(owner)).map((t) => t.task_id).sort()).toEqual(['t1', 't2', 't3', 't4']);
    await runStates.appendSessionTurn(owner, turn(2, 'again'));
    const turns = await runStates.sessionTurns(owner);
    expect(turns.filter((t) => t.task_id === 't2')).toEqual([turn(2, 'again')]);
    await Promise.all(Array.from({ length: 12 }, (_, i) => runStates.appendSessionTurn(owner, turn(10 + i))));
    expect(await runStates.sessionTurns(owner)).toHaveLength(10);
  });

  it('appends to a session whose turns were recorded before they had a version', async () => {
    const records = store.collection<{ _id: string; turns: unknown[] }>(RUN_STATE_COLLECTIONS.sessionTurns);
    await records.insertOne({ _id: sessionKey(owner), turns: [] });
    const keys = await records.find({});
    expect(keys).toHaveLength(1);
    await Promise.all(
      [1, 2].map((n) => runStates.appendSessionTurn(owner, { task_id: `t${n}`, query: 'q', answer: 'a', at: 'x' })),
    );
    expect((await runStates.sessionTurns(owner)).map((t) => t.task_id).sort()).toEqual(['t1', 't2']);
  });
});

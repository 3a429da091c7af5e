import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
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
});

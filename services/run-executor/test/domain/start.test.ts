import { describe, expect, it } from 'vitest';
import { idempotencyScope, inputArtifacts, newTaskRecord, spawnedPayload } from '../../src/domain/start.ts';

const triple = { tenant: 't', user: 'u', session: 's' };
const NOW = '2030-01-01T00:00:00.000Z';

describe('idempotencyScope', () => {
  it('differs when any member of the triple or the key differs', () => {
    const base = idempotencyScope(triple, 'k');
    expect(idempotencyScope({ ...triple, session: 's2' }, 'k')).not.toBe(base);
    expect(idempotencyScope({ ...triple, user: 'u2' }, 'k')).not.toBe(base);
    expect(idempotencyScope({ ...triple, tenant: 't2' }, 'k')).not.toBe(base);
    expect(idempotencyScope(triple, 'k2')).not.toBe(base);
    expect(idempotencyScope(triple, 'k')).toBe(base);
  });

  it('cannot be forged by moving separators between members', () => {
    expect(idempotencyScope({ tenant: 'a","b', user: 'c', session: 'd' }, 'e')).not.toBe(
      idempotencyScope({ tenant: 'a', user: 'b","c', session: 'd' }, 'e'),
    );
  });
});

describe('inputArtifacts', () => {
  it('keeps request order, collapses duplicates and adds hints and resolved metadata', () => {
    expect(
      inputArtifacts(['b', 'a', 'b'], { a: 'tool:ocr' }, [
        { artifact_id: 'b', mime_type: 'text/plain', size_bytes: 3 },
      ]),
    ).toEqual([
      { artifact_id: 'b', mime_type: 'text/plain', size_bytes: 3 },
      { artifact_id: 'a', disposition: 'tool:ocr' },
    ]);
  });

  it('is empty without ids', () => {
    expect(inputArtifacts(undefined, undefined)).toEqual([]);
  });
});

describe('newTaskRecord', () => {
  it('makes a pending foreground task whose goal is the query', () => {
    const task = newTaskRecord({
      taskId: 'task-1',
      triple,
      request: { identity: {}, query: 'q' },
      agent: {},
      artifacts: [],
      now: NOW,
    });
    expect(task).toEqual({
      _id: 'task-1',
      task_id: 'task-1',
      ...triple,
      kind: 'foreground',
      status: 'pending',
      query: 'q',
      goal: 'q',
      priority: 0,
      input_artifacts: [],
      background_acknowledged: false,
      created_at: NOW,
      updated_at: NOW,
      queued_at: NOW,
      steps: [],
      cost_usd: 0,
      context: [],
    });
  });

  it('records the named agent, its revision, the key and its scope', () => {
    const task = newTaskRecord({
      taskId: 'task-1',
      triple,
      request: { identity: {}, query: 'q', idempotency_key: 'k', priority: -2, agent_id: 'helper' },
      agent: { agent_id: 'helper', revision_id: 'rev-1' },
      artifacts: [],
      now: NOW,
    });
    expect(task).toMatchObject({
      agent_id: 'helper',
      agent_revision_id: 'rev-1',
      idempotency_key: 'k',
      idempotency_scope: idempotencyScope(triple, 'k'),
      priority: -2,
    });
  });
});

describe('spawnedPayload', () => {
  it('has exactly the five spec keys, empty strings for no parent and no key', () => {
    const task = newTaskRecord({
      taskId: 'task-1',
      triple,
      request: { identity: {}, query: 'q', priority: 4 },
      agent: {},
      artifacts: [],
      now: NOW,
    });
    expect(spawnedPayload(task)).toStrictEqual({
      TaskID: 'task-1',
      Kind: 'foreground',
      ParentTaskID: '',
      Priority: 4,
      IdempotencyKey: '',
    });
  });
});

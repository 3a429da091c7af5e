import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNS_STREAM, ensureInfrastructure } from '@ars/bus';
import { outcomeOf, storedEvents } from '@ars/service-kit/testing';
import type { VerifiedIdentity } from '@ars/contracts';
import { newCaller, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';
import { createErasedSessionRepository } from '../src/store/erased-session.repository.ts';

interface TaskView {
  task_id: string;
  status: string;
  kind: string;
  agent_id?: string;
  priority: number;
  goal: string;
  query: string;
  input_artifacts: { artifact_id: string; disposition?: string; mime_type?: string }[];
  idempotency_key?: string;
  background_acknowledged: boolean;
}

describe('start', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  const getTask = async (identity: VerifiedIdentity, taskId: string) =>
    ((await h.call('tasks.get', { task_id: taskId }, identity)) as { task: TaskView }).task;

  const listTasks = async (identity: VerifiedIdentity) =>
    ((await h.call('tasks.list', {}, identity)) as { items: TaskView[] }).items;

  it('spawns a pending task and answers its id with reused false', async () => {
    const caller = newCaller();
    const result = await h.call('start', { query: 'Plan a trip' }, caller);
    expect(result).toMatchObject({ reused: false, protocol_version: '0.1.0' });
    const taskId = (result as { task_id: string }).task_id;
    expect(await getTask(caller, taskId)).toMatchObject({
      task_id: taskId,
      status: 'pending',
      kind: 'foreground',
      tenant: caller.tenant,
      user: caller.user,
      session: caller.session,
      query: 'Plan a trip',
      goal: 'Plan a trip',
      priority: 0,
      input_artifacts: [],
      background_acknowledged: false,
    });
  });

  it('admits the session with the verified triple and the turn it opens', async () => {
    const caller = newCaller({ session: 'fresh-session' });
    const { task_id: taskId } = (await h.start(caller, { query: 'What is new?' })) as { task_id: string };
    const calls = () => h.fakes.session.admitted.filter((c) => c.identity.tenant === caller.tenant);
    await expect.poll(() => calls().length).toBe(1);
    expect(calls()[0]!.body).toEqual({
      tenant: caller.tenant,
      user: 'alice',
      session: 'fresh-session',
      turn: { task_id: taskId, query: 'What is new?' },
    });
  });

  describe('task.spawned and the run queue', () => {
    /** The RUNS messages whose Nats-Msg-Id is `taskId` (every one without it). */
    const queuedRuns = async (taskId?: string) => {
      const info = await h.bus.jsm.streams.info(RUNS_STREAM);
      const found: { subject: string; body: unknown }[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
        const msg = await h.bus.jsm.streams.getMessage(RUNS_STREAM, { seq }).catch(() => null);
        if (msg !== null && (taskId === undefined || msg.header.get('Nats-Msg-Id') === taskId)) {
          found.push({ subject: msg.subject, body: msg.json() });
        }
      }
      return found;
    };

    it('publishes task.spawned with exactly the spec keys on the run subject', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller, { priority: 3 });
      // The announcement follows the answer.
      await expect.poll(async () => (await storedEvents(h.bus, { tenant: caller.tenant })).length).toBe(1);
      const frames = await storedEvents(h.bus, { tenant: caller.tenant });
      expect(frames.map((f) => f.type)).toEqual(['task.spawned']);
      expect(frames[0]).toMatchObject({
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        run: taskId,
      });
      expect(frames[0]!.payload).toStrictEqual({
        TaskID: taskId,
        Kind: 'foreground',
        ParentTaskID: '',
        Priority: 3,
        IdempotencyKey: '',
      });
    });

    it('carries the idempotency key on task.spawned when one was given', async () => {
      const caller = newCaller();
      await h.start(caller, { idempotency_key: 'k-1' });
      const spawned = () => storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' });
      await expect.poll(spawned).toHaveLength(1);
      const frames = await spawned();
      expect(frames[0]!.payload.IdempotencyKey).toBe('k-1');
    });

    it('enqueues one RUNS message per task with Nats-Msg-Id = task id on its priority bucket', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller, { priority: 7 });
      await expect.poll(() => queuedRuns(taskId)).toEqual([{ subject: 'ars.runs.high', body: { task_id: taskId } }]);
      // The task records where its task.spawned is, once announced.
      await expect.poll(async () => (await h.tasks.getTask(taskId))?.spawned_sequence).toBeGreaterThan(0);
    });

    it('answers while the run queue refuses, and queues the run once it takes it again', async () => {
      const caller = newCaller();
      await h.bus.jsm.streams.delete(RUNS_STREAM);
      try {
        const { task_id: taskId } = await h.start(caller, { priority: 0 });
        expect(await getTask(caller, taskId)).toMatchObject({ status: 'pending' });
        // The first tries fail (no stream takes ars.runs.*); the stream is back well within the retries' window.
        await new Promise((resolve) => setTimeout(resolve, 400));
        await ensureInfrastructure(h.bus);
        await expect
          .poll(() => queuedRuns(), { timeout: 10_000 })
          .toEqual([{ subject: 'ars.runs.normal', body: { task_id: taskId } }]);
        // Queued once, under the task id as its message id (not a sweeper's requeue).
        expect(await queuedRuns(taskId)).toEqual(await queuedRuns());
        const spawned = await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' });
        expect(spawned.map((frame) => frame.run)).toEqual([taskId]);
        await expect.poll(async () => (await h.tasks.getTask(taskId))?.spawned_sequence).toBeGreaterThan(0);
      } finally {
        await ensureInfrastructure(h.bus);
      }
    });
  });

  describe('idempotency', () => {
    it('returns the same task with reused true for the same key in the same triple', async () => {
      const caller = newCaller();
      const first = await h.start(caller, { idempotency_key: 'same' });
      const second = await h.start(caller, { idempotency_key: 'same', query: 'another query' });
      expect(second).toMatchObject({ task_id: first.task_id, reused: true });
      expect(await listTasks(caller)).toHaveLength(1);
      expect(await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' })).toHaveLength(1);
    });

    it('spawns a new task for the same key in another session or of another user', async () => {
      const caller = newCaller();
      const first = await h.start(caller, { idempotency_key: 'same' });
      const otherSession = await h.start({ ...caller, session: 's-2' }, { idempotency_key: 'same' });
      const otherUser = await h.start({ ...caller, user: 'bob' }, { idempotency_key: 'same' });
      expect(otherSession.reused).toBe(false);
      expect(otherUser.reused).toBe(false);
      expect(new Set([first.task_id, otherSession.task_id, otherUser.task_id]).size).toBe(3);
    });

    it('gives one task and 49 reused answers to 50 concurrent starts with one key', async () => {
      const caller = newCaller();
      const results = await Promise.all(Array.from({ length: 50 }, () => h.start(caller, { idempotency_key: 'race' })));
      expect(new Set(results.map((r) => r.task_id)).size).toBe(1);
      expect(results.filter((r) => r.reused)).toHaveLength(49);
      expect(await listTasks(caller)).toHaveLength(1);
      const spawned = await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' });
      expect(spawned).toHaveLength(1);
    });
  });

  describe('agent_id', () => {
    it('leaves agent_id absent when the caller named none', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller);
      expect(await getTask(caller, taskId)).not.toHaveProperty('agent_id');
    });

    it('accepts the configured default agent without asking the registry', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller, { agent_id: 'default' });
      expect((await getTask(caller, taskId)).agent_id).toBe('default');
      expect(h.fakes.agents.calls.filter((c) => (c as { tenant: string }).tenant === caller.tenant)).toEqual([]);
    });

    it("accepts an agent with a revision in the caller's tenant", async () => {
      const caller = newCaller();
      h.fakes.agents.register(caller.tenant, 'helper', 'rev-1');
      const { task_id: taskId } = await h.start(caller, { agent_id: 'helper' });
      expect((await getTask(caller, taskId)).agent_id).toBe('helper');
    });

    it("refuses another tenant's agent exactly as an unknown one, before any task exists", async () => {
      const owner = newCaller();
      h.fakes.agents.register(owner.tenant, 'secret', 'rev-1');
      const caller = newCaller();
      const foreign = await outcomeOf(h.start(caller, { agent_id: 'secret' }));
      const unknown = await outcomeOf(h.start(caller, { agent_id: 'nobody' }));
      expect(foreign).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(unknown).toMatchObject({ ok: false, code: 'invalid_request' });
      const text = (o: typeof foreign, id: string) => (o.ok ? '' : o.message.replace(id, '<id>'));
      expect(text(foreign, 'secret')).toBe(text(unknown, 'nobody'));
      expect(await listTasks(caller)).toEqual([]);
      expect(await storedEvents(h.bus, { tenant: caller.tenant })).toEqual([]);
      // Nor was the session opened or touched for a start that was refused.
      expect(h.fakes.session.admitted.filter((c) => c.identity.tenant === caller.tenant)).toEqual([]);
    });
  });

  describe('session', () => {
    const triple = (c: VerifiedIdentity) => ({ tenant: c.tenant, user: c.user, session: c.session });
    const admissionsOf = (c: VerifiedIdentity) =>
      h.fakes.session.admitted.filter((a) => a.identity.tenant === c.tenant).map((a) => a.body);

    it('refuses a session whose erasure reached the run-executor with session_erased and spawns nothing', async () => {
      const caller = newCaller({ session: 'gone' });
      // The erasure cascade of sessions.delete: it completes only once this ran.
      await h.service.call('_tasks.erase_session', triple(caller), caller);
      const outcome = await outcomeOf(h.start(caller));
      expect(outcome).toMatchObject({ ok: false, code: 'session_erased' });
      expect(await listTasks(caller)).toEqual([]);
      expect(await storedEvents(h.bus, { tenant: caller.tenant })).toEqual([]);
    });

    it('still starts in another session of the same user', async () => {
      const caller = newCaller({ session: 'gone' });
      await h.service.call('_tasks.erase_session', triple(caller), caller);
      await expect(h.start({ ...caller, session: 'fresh' })).resolves.toMatchObject({ reused: false });
    });

    it('answers without waiting for the session service, which still receives the admission with its turn', async () => {
      const caller = newCaller();
      let open!: () => void;
      h.fakes.session.gate = new Promise<void>((resolve) => (open = resolve));
      try {
        // The session service answers nothing until the gate opens.
        const started = await h.start(caller, { query: 'first' });
        expect(started.reused).toBe(false);
        expect(await getTask(caller, started.task_id)).toMatchObject({ status: 'pending', query: 'first' });
        await expect
          .poll(() => admissionsOf(caller))
          .toEqual([{ ...triple(caller), turn: { task_id: started.task_id, query: 'first' } }]);
      } finally {
        open();
        h.fakes.session.gate = undefined;
      }
    });

    it('refuses later starts of a session the session service refused as erased, its cascade still on the way', async () => {
      const caller = newCaller();
      await h.start(caller, { query: 'before' });
      // The start answered before its admission reached the session service: admitted before the erasure.
      await expect.poll(() => admissionsOf(caller)).toHaveLength(1);
      // The session service erased the session, but its cascade has not reached the run-executor yet:
      // this start goes through, and the refusal of its admission records the erasure here.
      h.fakes.session.erase(caller.tenant, caller.user, caller.session);
      await expect(h.start(caller)).resolves.toMatchObject({ reused: false });
      await expect
        .poll(() => createErasedSessionRepository(h.store).isErased(triple(caller)), { timeout: 5_000, interval: 20 })
        .toBe(true);
      const before = await storedEvents(h.bus, { tenant: caller.tenant });
      await expect(outcomeOf(h.start(caller, { query: 'after' }))).resolves.toMatchObject({
        ok: false,
        code: 'session_erased',
      });
      expect((await listTasks(caller)).map((t) => t.query)).not.toContain('after');
      expect(await storedEvents(h.bus, { tenant: caller.tenant })).toEqual(before);
    });

    it('records the erased-session marker when _tasks.erase_session runs', async () => {
      const caller = newCaller();
      await h.start(caller);
      await h.service.call('_tasks.erase_session', triple(caller), caller);
      expect(await createErasedSessionRepository(h.store).isErased(triple(caller))).toBe(true);
      expect(await createErasedSessionRepository(h.store).isErased({ ...triple(caller), session: 'other' })).toBe(
        false,
      );
      await expect(outcomeOf(h.start(caller))).resolves.toMatchObject({ ok: false, code: 'session_erased' });
    });
  });

  describe('input artifacts', () => {
    it('records the ids with their disposition hints and resolved metadata', async () => {
      const caller = newCaller();
      h.fakes.artifacts.add(caller.tenant, caller.user, 'a-1', 'image/png', 10);
      h.fakes.artifacts.add(caller.tenant, caller.user, 'a-2', 'text/plain', 20);
      const { task_id: taskId } = await h.start(caller, {
        input_artifact_ids: ['a-1', 'a-2'],
        input_artifact_dispositions: { 'a-1': 'inline' },
      });
      expect((await getTask(caller, taskId)).input_artifacts).toEqual([
        { artifact_id: 'a-1', disposition: 'inline', mime_type: 'image/png', size_bytes: 10 },
        { artifact_id: 'a-2', mime_type: 'text/plain', size_bytes: 20 },
      ]);
    });

    it('refuses an artifact the caller may not read with invalid_request and spawns nothing', async () => {
      const owner = newCaller();
      h.fakes.artifacts.add(owner.tenant, 'bob', 'a-1', 'image/png', 10);
      const outcome = await outcomeOf(h.start(owner, { input_artifact_ids: ['a-1'] }));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(await listTasks(owner)).toEqual([]);
      expect(h.fakes.session.admitted.filter((c) => c.identity.tenant === owner.tenant)).toEqual([]);
    });
  });

  describe('bad requests', () => {
    it.each([
      ['a missing query', {}],
      ['an empty query', { query: '' }],
      ['an unknown member', { query: 'q', extra: true }],
      ['a disposition for an artifact not listed', { query: 'q', input_artifact_dispositions: { x: 'ref' } }],
      [
        'a malformed disposition',
        { query: 'q', input_artifact_ids: ['x'], input_artifact_dispositions: { x: 'copy' } },
      ],
      ['a non-integer priority', { query: 'q', priority: 1.5 }],
    ])('refuses %s with invalid_request', async (_what, body) => {
      const outcome = await outcomeOf(h.service.call('start', { identity: {}, ...body }, newCaller()));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it('refuses a body session contradicting the verified one with identity_required', async () => {
      const outcome = await outcomeOf(
        h.service.call('start', { identity: { session: 'other' }, query: 'q' }, newCaller()),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    });
  });
});

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { newTaskRecord } from '../../src/domain/start.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { newCaller, startEngineHarness, TERMINAL_TYPES } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const indexOf = (events: readonly EventFrame[], type: string, from = 0) =>
  events.findIndex((e, i) => i >= from && e.type === type);
const RUN_EVENT = /^(llm|tool|planner)\./;

describe('steering controls (engine side)', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** Starts a run and waits until it is inside its first tool call. */
  async function inFirstTool(
    query: string,
    caller = newCaller(),
  ): Promise<{ taskId: string; watch: RunWatch; caller: VerifiedIdentity }> {
    const { taskId, watch } = await h.start(caller, { query });
    await watch.until((e) => e.type === 'tool.invoked');
    return { taskId, watch, caller };
  }

  describe('a control racing the end of its run', () => {
    it('is answered either way, never left to time out: accepted while the inbox is open, not_found after', async () => {
      const answers = new Map<string, number>();
      for (let i = 0; i < 40; i += 1) {
        const caller = newCaller();
        const { taskId, watch } = await h.start(caller, { query: '#script finish:quick' });
        // Cancels back to back while the one-step run ends on its own or by the first of them.
        for (;;) {
          const outcome = await outcomeOf(h.control('cancel', taskId, caller, { hard: true }));
          const answer = outcome.ok ? 'accepted' : String(outcome.code);
          answers.set(answer, (answers.get(answer) ?? 0) + 1);
          if (!outcome.ok) break;
        }
        await watch.terminal();
        watch.stop();
      }
      expect([...answers.keys()].filter((answer) => answer !== 'accepted' && answer !== 'not_found')).toEqual([]);
      expect(answers.get('not_found')).toBe(40);
    }, 120_000);
  });

  describe('cancel', () => {
    it('soft: lets the in-flight tool call finish, then stops at the step boundary', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:300};tool:echo{};finish:ok');
      await h.control('cancel', taskId, caller);
      const terminal = await watch.terminal();
      watch.stop();
      const events = watch.events;
      expect(terminal.payload).toEqual({ TaskID: taskId, Reason: 'cancel requested by alice', Cascaded: false });
      const received = indexOf(events, 'control.received');
      const applied = indexOf(events, 'control.applied');
      expect(received).toBeGreaterThan(0);
      expect(applied).toBeGreaterThan(received);
      expect(events.indexOf(terminal)).toBeGreaterThan(applied);
      expect(ofType(events, 'control.applied')[0]?.payload).toEqual({
        Type: 'cancel',
        Outcome: 'cancel_at_next_boundary',
        Err: '',
      });
      expect(ofType(events, 'tool.completed')).toHaveLength(1);
      expect(ofType(events, 'planner.decision')).toHaveLength(1);
      expect(events.filter((e) => TERMINAL_TYPES.includes(e.type))).toHaveLength(1);
      expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'cancelled' });
    });

    it('hard: aborts an in-flight tool call at once', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:20000};finish:ok');
      const started = Date.now();
      await h.control('cancel', taskId, caller, { hard: true });
      const terminal = await watch.terminal(5_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(terminal.type).toBe('task.cancelled');
      expect(ofType(watch.events, 'tool.completed')).toEqual([]);
      watch.stop();
    });

    it('hard: aborts a streaming LLM call, and no LLM or tool event of the run follows task.cancelled', async () => {
      const caller = newCaller();
      const { taskId, watch } = await h.start(caller, { query: '#script stream:400/5;tool:echo{};finish:x' });
      await watch.until((e) => e.type === 'llm.completion.chunk');
      await h.control('cancel', taskId, caller, { hard: true });
      const terminal = await watch.terminal();
      // Give a straggler the time to show up if the engine let one through.
      await sleep(300);
      watch.stop();
      const after = watch.events.slice(watch.events.indexOf(terminal) + 1);
      expect(after.filter((e) => RUN_EVENT.test(e.type))).toEqual([]);
      expect(ofType(watch.events, 'llm.completion.chunk').length).toBeLessThan(400);
      expect(ofType(watch.events, 'planner.decision')).toEqual([]);
    });

    it('soft: no LLM or tool event of the run follows task.cancelled', async () => {
      const caller = newCaller();
      const { taskId, watch } = await h.start(caller, { query: '#script stream:40/10;tool:echo{};finish:x' });
      await watch.until((e) => e.type === 'llm.completion.chunk');
      await h.control('cancel', taskId, caller);
      const terminal = await watch.terminal();
      // Give a straggler the time to show up if the engine let one through.
      await sleep(300);
      watch.stop();
      expect(terminal.type).toBe('task.cancelled');
      const after = watch.events.slice(watch.events.indexOf(terminal) + 1);
      expect(after.filter((e) => RUN_EVENT.test(e.type))).toEqual([]);
    });

    it('soft: cascades to a running child as a soft cancel with Cascaded true', async () => {
      // The parent waits for an approval, so only the cancel ends it.
      const caller = newCaller();
      const { taskId: parentId, watch: parent } = await h.start(caller, {
        query: '#script tool:sensitive_action{};finish:ok',
      });
      await parent.until((e) => e.type === 'tool.approval_requested');
      const childId = randomUUID();
      await h.tasks.insertTask({
        ...newTaskRecord({
          taskId: childId,
          triple: caller,
          request: { identity: {}, query: '#script tool:wait{ms:1500};tool:echo{};finish:ok' },
          agent: {},
          artifacts: [],
          now: new Date().toISOString(),
        }),
        parent_task_id: parentId,
      });
      const child = await h.watch(caller, childId);
      await enqueueRun(h.bus, { task_id: childId, priority: 0 });
      await child.until((e) => e.type === 'tool.invoked');
      await h.control('cancel', parentId, caller);
      expect((await parent.terminal()).payload).toMatchObject({ Cascaded: false });
      expect((await child.terminal()).payload).toMatchObject({ TaskID: childId, Cascaded: true });
      parent.stop();
      child.stop();
      // Soft (hard false): the child's call in flight completed; no further step ran.
      expect(ofType(child.events, 'tool.completed').map((e) => e.payload.ToolName)).toEqual(['wait']);
      expect(ofType(child.events, 'tool.invoked')).toHaveLength(1);
      expect(ofType(child.events, 'planner.decision')).toHaveLength(1);
      expect(await h.tasks.getTask(childId)).toMatchObject({ status: 'cancelled' });
    });

    it('cascades to a running child task with Cascaded true', async () => {
      const { taskId: parentId, watch: parent, caller } = await inFirstTool('#script tool:wait{ms:20000};finish:ok');
      const childId = randomUUID();
      await h.tasks.insertTask({
        ...newTaskRecord({
          taskId: childId,
          triple: caller,
          request: { identity: {}, query: '#script tool:wait{ms:20000};finish:ok' },
          agent: {},
          artifacts: [],
          now: new Date().toISOString(),
        }),
        parent_task_id: parentId,
      });
      const child = await h.watch(caller, childId);
      await enqueueRun(h.bus, { task_id: childId, priority: 0 });
      await child.until((e) => e.type === 'tool.invoked');
      await h.control('cancel', parentId, caller, { hard: true });
      expect((await parent.terminal()).payload).toMatchObject({ Cascaded: false });
      expect((await child.terminal()).payload).toMatchObject({ TaskID: childId, Cascaded: true });
      expect(await h.tasks.getTask(childId)).toMatchObject({ status: 'cancelled' });
      parent.stop();
      child.stop();
    });

    it('cascades to a child that has not started yet, when it is claimed', async () => {
      const { taskId: parentId, watch: parent, caller } = await inFirstTool('#script tool:wait{ms:20000};finish:ok');
      const childId = randomUUID();
      await h.tasks.insertTask({
        ...newTaskRecord({
          taskId: childId,
          triple: caller,
          request: { identity: {}, query: '#script finish:should not run' },
          agent: {},
          artifacts: [],
          now: new Date().toISOString(),
        }),
        parent_task_id: parentId,
      });
      await h.control('cancel', parentId, caller, { hard: true });
      await parent.terminal();
      const child = await h.watch(caller, childId);
      await enqueueRun(h.bus, { task_id: childId, priority: 0 });
      expect((await child.terminal()).payload).toMatchObject({ Cascaded: true });
      expect(ofType(child.events, 'planner.decision')).toEqual([]);
      parent.stop();
      child.stop();
    });

    it('refuses a control once the run has ended: not_found', async () => {
      const caller = newCaller();
      const { taskId, watch } = await h.start(caller, { query: 'quick' });
      await watch.terminal();
      watch.stop();
      expect(await outcomeOf(h.control('cancel', taskId, caller))).toMatchObject({ ok: false, code: 'not_found' });
    });
  });

  describe('pause and resume', () => {
    it('parks the run at the next step boundary with status running, and resume advances it', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};tool:echo{};finish:ok');
      await h.control('pause', taskId, caller, { reason: 'coffee' });
      const requested = await watch.until((e) => e.type === 'pause.requested');
      expect(requested.payload).toEqual({ Token: expect.any(String), Reason: 'coffee' });
      await watch.until((e) => e.type === 'tool.completed');
      // Parked: no further step while the pause is pending.
      await sleep(300);
      expect(ofType(watch.events, 'planner.decision')).toHaveLength(1);
      expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'running' });
      const listed = (await h.call('pause.list', {}, caller)) as { items: { token: string; kind: string }[] };
      expect(listed.items).toContainEqual(expect.objectContaining({ token: requested.payload.Token, kind: 'pause' }));

      await h.control('resume', taskId, caller, { reason: 'back' });
      const resumed = await watch.until((e) => e.type === 'pause.resumed');
      expect(resumed.payload).toEqual({ Token: requested.payload.Token, Reason: 'back', Decision: 'resume' });
      expect((await watch.terminal()).type).toBe('task.completed');
      const types = watch.types();
      expect(types.indexOf('control.applied')).toBeLessThan(types.indexOf('pause.requested'));
      expect(types.lastIndexOf('control.applied')).toBeLessThan(types.indexOf('pause.resumed'));
      expect(ofType(watch.events, 'planner.decision')).toHaveLength(3);
      const after = (await h.call('pause.list', {}, caller)) as { items: unknown[] };
      expect(after.items).toEqual([]);
      watch.stop();
    });

    it('rejects a resume when the run is not paused', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('resume', taskId, caller);
      const rejected = await watch.until((e) => e.type === 'control.rejected');
      expect(rejected.payload).toEqual({ Type: 'resume', Reason: 'not_paused', CallerScope: 'owner_user' });
      await watch.terminal();
      watch.stop();
    });

    it('cancels a parked run at once', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:100};finish:ok');
      await h.control('pause', taskId, caller);
      await watch.until((e) => e.type === 'tool.completed');
      await h.control('cancel', taskId, caller);
      expect((await watch.terminal()).type).toBe('task.cancelled');
      const listed = (await h.call('pause.list', {}, caller)) as { items: unknown[] };
      expect(listed.items).toEqual([]);
      watch.stop();
    });
  });

  describe('redirect, inject_context, user_message', () => {
    it('redirect rewrites the goal and the next step uses it', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('redirect', taskId, caller, { goal: 'book a train instead' });
      await watch.terminal();
      watch.stop();
      const decisions = ofType(watch.events, 'planner.decision');
      expect(decisions[0]?.payload.ReasoningTrace).not.toContain('book a train instead');
      expect(decisions[1]?.payload.ReasoningTrace).toContain('goal: book a train instead');
      expect(ofType(watch.events, 'control.applied')[0]?.payload).toMatchObject({ Type: 'redirect' });
      expect(await h.tasks.getTask(taskId)).toMatchObject({ goal: 'book a train instead' });
    });

    it('inject_context is visible on the next step', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('inject_context', taskId, caller, { note: 'the user is in Paris' });
      await watch.terminal();
      watch.stop();
      const trace = ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace;
      expect(trace).toContain('context: Operator context: {"note":"the user is in Paris"}');
    });

    it('inject_context with keys the document store refuses ($…, dotted, empty) is applied and visible', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('inject_context', taskId, caller, { $where: '1', 'a.b': 2, '': { '$nested.key': true } });
      await watch.terminal();
      watch.stop();
      expect(ofType(watch.events, 'control.applied')[0]?.payload).toEqual({
        Type: 'inject_context',
        Outcome: 'visible_on_next_step',
        Err: '',
      });
      expect(ofType(watch.events, 'control.rejected')).toEqual([]);
      const trace = ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace;
      expect(trace).toContain('context: Operator context: {"$where":"1","a.b":2,"":{"$nested.key":true}}');
    });

    it('inject_context keeps a __proto__ member', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      const payload = JSON.parse('{"__proto__":{"admin":true},"note":"x"}') as Record<string, unknown>;
      await h.control('inject_context', taskId, caller, payload);
      await watch.terminal();
      watch.stop();
      const trace = ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace;
      expect(trace).toContain('context: Operator context: {"__proto__":{"admin":true},"note":"x"}');
    });

    it('narrates a control that fails while being applied as rejected internal', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      // A context field that is no list: appending to it fails in the store.
      const tasks = h.store.collection<{ _id: string; context: unknown }>('tasks');
      await tasks.updateOne({ _id: taskId }, { $set: { context: 'not a list' } });
      await h.control('inject_context', taskId, caller, { note: 'lost?' });
      const rejected = await watch.until((e) => e.type === 'control.rejected');
      expect(rejected.payload).toEqual({ Type: 'inject_context', Reason: 'internal', CallerScope: 'owner_user' });
      expect((await watch.terminal()).type).toBe('task.completed');
      watch.stop();
      expect(ofType(watch.events, 'control.received')).toHaveLength(1);
      expect(ofType(watch.events, 'control.applied')).toEqual([]);
      expect(String(ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace)).not.toContain('lost?');
    });

    it('user_message is visible on the next step', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('user_message', taskId, caller, { message: 'please hurry' });
      await watch.terminal();
      watch.stop();
      expect(ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace).toContain('user: please hurry');
    });

    it('applies a control once per event_id', async () => {
      const { taskId, watch, caller } = await inFirstTool('#script tool:wait{ms:200};finish:ok');
      await h.control('user_message', taskId, caller, { message: 'once' }, 'ev-1');
      await h.control('user_message', taskId, caller, { message: 'once' }, 'ev-1');
      await watch.terminal();
      watch.stop();
      expect(ofType(watch.events, 'control.received')).toHaveLength(1);
      const trace = String(ofType(watch.events, 'planner.decision')[1]?.payload.ReasoningTrace);
      expect(trace.match(/user: once/g)).toHaveLength(1);
    });
  });

  describe('prioritize', () => {
    it('records the new priority and publishes task.prioritised', async () => {
      const admin = newCaller({ scopes: ['admin'] });
      const { taskId, watch } = await inFirstTool('#script tool:wait{ms:200};finish:ok', admin);
      await h.control('prioritize', taskId, admin, { priority: 7 });
      const event = await watch.until((e) => e.type === 'task.prioritised');
      expect(event.payload).toEqual({ TaskID: taskId, PriorPriority: 0, NewPriority: 7 });
      const types = watch.types();
      expect(types.indexOf('control.received')).toBeLessThan(types.indexOf('control.applied'));
      expect(types.indexOf('control.applied')).toBeLessThan(types.indexOf('task.prioritised'));
      expect(await h.tasks.getTask(taskId)).toMatchObject({ priority: 7 });
      await watch.terminal();
      watch.stop();
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { isTerminal } from './support/event-log.ts';
import type { EventLog } from './support/event-log.ts';
import { readRawFrames } from './support/raw-sse.ts';
import { barrierRun, refusal, startWatched, storedRunEvents } from './support/runs.ts';
import type { Started, WatchedRun } from './support/runs.ts';

/**
 * Runs end to end: start, the planner loop, the nine steering controls,
 * human approval and the task reads, over real HTTP and SSE against the
 * whole system. Runs are driven by the scripted provider's `#script`
 * directive and the built-in tools (echo, wait, sensitive_action).
 */

interface Caller {
  readonly identity: TestIdentity;
  readonly token: string;
  readonly client: ArsClient;
}

const LLM_OR_TOOL = /^(llm\.|tool\.|planner\.)/;

/** side_effect (otherwise unused here) gets an approval policy whose timeout rejects, for the timeout test. */
const RUNS_ENV = {
  TOOL_APPROVAL_POLICIES: JSON.stringify({ side_effect: { mode: 'always', timeout_seconds: 1, on_timeout: 'reject' } }),
  RUN_MAX_STEPS: '6',
};

describe('runs end to end', () => {
  let sys: TestSystem;

  async function caller(prefix: string, scopes: readonly string[] = [], base?: TestIdentity): Promise<Caller> {
    const identity = base ?? uniqueIdentity(prefix);
    const token = await mintToken(sys.baseUrl, { ...identity, scopes });
    return { identity, token, client: sys.client({ token }) };
  }

  const control = (client: ArsClient, method: string, run: string, body: Record<string, unknown> = {}) =>
    client.call<{ accepted: boolean; method: string; protocol_version: string }>(method, {
      identity: { run },
      ...body,
    });

  /** Ends a run that may still be alive (a test's cleanup); a 404 means it already ended. */
  async function hardCancel(owner: Caller, run: WatchedRun): Promise<void> {
    await control(owner.client, 'cancel', run.taskId, { payload: { hard: true } }).catch(() => undefined);
    await run.log.terminal().catch(() => undefined);
    await run.log.close();
  }

  /** The narration of one control: control.received, then control.applied (or control.rejected) of its Type. */
  async function narrated(
    log: EventLog,
    type: string,
    outcome: 'control.applied' | 'control.rejected' = 'control.applied',
  ) {
    const frame = await log.next(outcome, (f) => payload(f)['Type'] === type);
    const received = log.frames.find((f) => f.type === 'control.received' && payload(f)['Type'] === type);
    expect(received?.sequence ?? Infinity).toBeLessThan(frame.sequence);
    return frame;
  }

  const after = (frames: readonly EventFrame[], anchor: EventFrame) =>
    frames.filter((f) => f.sequence > anchor.sequence);
  const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;

  beforeAll(async () => {
    // In one process, as `ars up` runs it by default (isolation.e2e and the others run one process per service).
    sys = await startTestSystem({ env: RUNS_ENV, mode: 'one-process' });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  describe('start', () => {
    it('publishes task.spawned, task.started, planner, LLM and tool events, then exactly one terminal event', async () => {
      const owner = await caller('life');
      const run = await startWatched(owner.client, { query: '#script tool:echo{"text":"hi"};finish:done' });
      const terminal = await run.log.terminal();
      const types = run.log.types();

      expect(types.slice(0, 2)).toEqual(['task.spawned', 'task.started']);
      expect(terminal.type).toBe('task.completed');
      expect(types.at(-1)).toBe('task.completed');
      const middle = types.slice(2, -1);
      expect(middle.filter((type) => type.startsWith('task.'))).toEqual([]);
      for (const type of [
        'llm.completion.chunk',
        'llm.cost.recorded',
        'planner.decision',
        'tool.invoked',
        'tool.completed',
      ]) {
        expect(middle).toContain(type);
      }
      expect(middle.indexOf('planner.decision')).toBeLessThan(middle.indexOf('tool.invoked'));
      expect(middle.indexOf('tool.invoked')).toBeLessThan(middle.indexOf('tool.completed'));

      const [spawned, started] = run.log.frames;
      expect(payload(spawned!)).toEqual({
        TaskID: run.taskId,
        Kind: 'foreground',
        ParentTaskID: '',
        Priority: 0,
        IdempotencyKey: '',
      });
      expect(payload(started!)).toMatchObject({ TaskID: run.taskId, PriorState: 'pending' });
      const sequences = run.log.frames.map((f) => f.sequence);
      expect(sequences).toEqual([...new Set(sequences)].sort((a, b) => a - b));
      expect(run.log.frames.every((f) => f.run === run.taskId && f.session === owner.identity.session)).toBe(true);

      await barrierRun(owner.client);
      const stored = await storedRunEvents(owner.client, run.taskId);
      expect(stored.filter(isTerminal)).toHaveLength(1);
      expect(stored.map((f) => f.sequence)).toEqual(sequences);
      await run.log.close();
    });

    it('answers a repeated idempotency key in the same session with the same task and reused true', async () => {
      const owner = await caller('idem');
      const body = { identity: {}, query: '#script finish:once', idempotency_key: 'key-1' };
      const first = await owner.client.call<Started>('start', body);
      const second = await owner.client.call<Started>('start', body);
      expect(first.reused).toBe(false);
      expect(second).toMatchObject({ task_id: first.task_id, reused: true });
      const list = await owner.client.call<{ items: { task_id: string }[] }>('tasks.list', { identity: {} });
      expect(list.items.map((t) => t.task_id)).toEqual([first.task_id]);
    });

    it('spawns a new task for the same idempotency key in another session of the same user', async () => {
      const owner = await caller('idem-s');
      const body = { identity: {}, query: '#script finish:once', idempotency_key: 'key-1' };
      const first = await owner.client.call<Started>('start', body);
      const other = await owner.client.call<Started>('start', body, { session: `${owner.identity.session}-b` });
      expect(other.reused).toBe(false);
      expect(other.task_id).not.toBe(first.task_id);
    });

    it('gives one task for 20 concurrent starts with one idempotency key', async () => {
      const owner = await caller('race');
      const body = { identity: {}, query: '#script finish:raced', idempotency_key: 'race-key' };
      const answers = await Promise.all(Array.from({ length: 20 }, () => owner.client.call<Started>('start', body)));
      expect(new Set(answers.map((a) => a.task_id)).size).toBe(1);
      expect(answers.filter((a) => !a.reused)).toHaveLength(1);
      const list = await owner.client.call<{ items: { task_id: string; idempotency_key?: string }[] }>('tasks.list', {
        identity: {},
      });
      expect(list.items).toHaveLength(1);
      expect(list.items[0]).toMatchObject({ task_id: answers[0]!.task_id, idempotency_key: 'race-key' });
    });

    it("refuses an unknown agent_id and another tenant's agent_id identically, before any task exists", async () => {
      const other = await caller('agent-b', ['admin']);
      const agentId = `helper-${other.identity.tenant}`;
      await other.client.call('agent_config.set_revision', { identity: {}, agent_id: agentId, config: {} });
      const mine = await other.client.call<Started>('start', { identity: {}, query: 'hello', agent_id: agentId });
      expect(mine.reused).toBe(false);

      const owner = await caller('agent-a');
      const unknownId = `nobody-${owner.identity.tenant}`;
      const foreign = await refusal(owner.client.call('start', { identity: {}, query: 'hello', agent_id: agentId }));
      const unknown = await refusal(owner.client.call('start', { identity: {}, query: 'hello', agent_id: unknownId }));
      expect(foreign).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(unknown).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(foreign.message.replace(agentId, '<id>')).toBe(unknown.message.replace(unknownId, '<id>'));
      const list = await owner.client.call<{ items: unknown[]; counts: Record<string, number> }>('tasks.list', {
        identity: {},
      });
      expect(list.items).toEqual([]);
      expect(Object.values(list.counts).every((count) => count === 0)).toBe(true);
      // Nor did the refused starts open their session.
      const sessions = await owner.client.call<{ items: unknown[] }>('sessions.list', { identity: {} });
      expect(sessions.items).toEqual([]);
    });

    it('runs the configuration as changed since the previous run of the same session and agent', async () => {
      // The executor keeps a resolved configuration per (tenant, user, session, agent) until a change is
      // announced: each run here follows a write of another layer, and must see it.
      const admin = await caller('config-change', ['admin']);
      const agentId = `cfg-${admin.identity.tenant}`;
      const modelOf = async (run: WatchedRun) => {
        await run.log.terminal();
        const cost = run.log.frames.find((f) => f.type === 'llm.cost.recorded');
        await run.log.close();
        return cost === undefined ? undefined : payload(cost)['Model'];
      };
      const runOnce = () =>
        startWatched(admin.client, { query: '#script finish:done', agent_id: agentId }).then(modelOf);
      const revise = (model: string) =>
        admin.client.call('agent_config.set_revision', {
          identity: {},
          agent_id: agentId,
          config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' }, llm_params: { model } },
        });

      await revise('model-one');
      expect(await runOnce()).toBe('model-one');
      expect(await runOnce()).toBe('model-one');
      await revise('model-two');
      expect(await runOnce()).toBe('model-two');
      await admin.client.call('governance.set_tenant_overrides', {
        identity: {},
        overrides: { model: 'tenant-model' },
      });
      expect(await runOnce()).toBe('tenant-model');
      await admin.client.call('governance.set_tenant_overrides', { identity: {}, overrides: { model: null } });
      expect(await runOnce()).toBe('model-two');
    });

    it('records input artifacts and their disposition hints on the task', async () => {
      const owner = await caller('inputs');
      const put = await owner.client.call<{ artifact: { artifact_id: string } }>('artifacts.put', {
        identity: {},
        content_base64: Buffer.from('some notes').toString('base64'),
        mime_type: 'text/plain',
      });
      const artifactId = put.artifact.artifact_id;
      const started = await owner.client.call<Started>('start', {
        identity: {},
        query: '#script finish:read',
        input_artifact_ids: [artifactId],
        input_artifact_dispositions: { [artifactId]: 'ref' },
      });
      const detail = await owner.client.call<{ task: { input_artifacts: unknown[] } }>('tasks.get', {
        identity: {},
        task_id: started.task_id,
      });
      expect(detail.task.input_artifacts).toEqual([
        expect.objectContaining({ artifact_id: artifactId, disposition: 'ref' }),
      ]);
    });

    it('refuses a start on an erased session with 410 session_erased', async () => {
      const owner = await caller('erased');
      await owner.client.call('start', { identity: {}, query: '#script finish:before' });
      await owner.client.call('sessions.delete', { identity: {} });
      const error = await refusal(owner.client.call('start', { identity: {}, query: 'after' }));
      expect(error).toMatchObject({ status: 410, code: 'session_erased' });
    });
  });

  describe('planner loop', () => {
    it('reports a retried tool failure, an exhausted retry policy and invalid arguments, and carries on', async () => {
      const owner = await caller('tools');
      const run = await startWatched(owner.client, {
        query: '#script tool:fail{"times":1};tool:fail{"times":5};tool:wait{"ms":"soon"};finish:done',
      });
      const terminal = await run.log.terminal();
      expect(terminal.type).toBe('task.completed');
      const tools = run.log.frames
        .filter((f) => f.type.startsWith('tool.'))
        .map((f) => [f.type, payload(f)['ToolName'], payload(f)['Attempts'] ?? null]);
      expect(tools).toEqual([
        ['tool.invoked', 'fail', null],
        ['tool.failed', 'fail', 1],
        ['tool.completed', 'fail', 2],
        ['tool.invoked', 'fail', null],
        ['tool.failed', 'fail', 1],
        ['tool.failed', 'fail', 2],
        ['tool.failed', 'fail', 3],
        ['tool.policy_exhausted', 'fail', 3],
        ['tool.invalid_args', 'wait', null],
      ]);
      await run.log.close();
    });

    it('fails a run at its maximum number of steps with planner.max_steps_exceeded, then task.failed', async () => {
      const owner = await caller('steps');
      const run = await startWatched(owner.client, { query: '#script tool:echo{"again":true};loop' });
      const terminal = await run.log.terminal();
      expect(payload(terminal)).toMatchObject({ ErrorCode: 'max_steps_exceeded' });
      const exceeded = run.log.frames.find((f) => f.type === 'planner.max_steps_exceeded')!;
      expect(payload(exceeded)).toMatchObject({ MaxSteps: 6, StepsObserved: 6, LastTool: 'echo' });
      expect(run.log.types().filter((t) => t === 'tool.completed')).toHaveLength(6);
      expect(after(run.log.frames, exceeded).map((f) => f.type)).toEqual(['task.failed']);
      await run.log.close();
    });
  });

  describe('task reads', () => {
    it('tasks.get, tasks.list and pause.list carry a sequence from which SSE resumes with no gap and no duplicate', async () => {
      const owner = await caller('snap');
      const run = await startWatched(owner.client, { query: '#script tool:sensitive_action{"what":"x"};finish:done' });
      const requested = await run.log.next('tool.approval_requested');
      const detail = await owner.client.call<{ sequence: number; task: { status: string } }>('tasks.get', {
        identity: {},
        task_id: run.taskId,
      });
      const list = await owner.client.call<{ sequence: number; items: { task_id: string }[] }>('tasks.list', {
        identity: {},
      });
      const pauses = await owner.client.call<{ sequence: number; items: { token: string; tool?: string }[] }>(
        'pause.list',
        { identity: {} },
      );
      const token = payload(requested)['PauseToken'];
      expect(detail.task.status).toBe('running');
      expect(list.items.map((t) => t.task_id)).toEqual([run.taskId]);
      expect(pauses.items).toEqual([expect.objectContaining({ token, tool: 'sensitive_action', task_id: run.taskId })]);
      for (const snapshot of [detail, list, pauses])
        expect(snapshot.sequence).toBeGreaterThanOrEqual(requested.sequence);

      await control(owner.client, 'approve', run.taskId, { payload: { token } });
      await run.log.terminal();
      for (const snapshot of [detail, list, pauses]) {
        const resumed = await readRawFrames({
          baseUrl: sys.baseUrl,
          token: owner.token,
          run: run.taskId,
          lastEventId: snapshot.sequence,
          until: (frames) => frames.some(isTerminal),
        });
        const expected = run.log.frames.filter((f) => f.sequence > snapshot.sequence).map((f) => f.sequence);
        expect(resumed.map((f) => f.sequence)).toEqual(expected);
      }
      await run.log.close();
    });

    it("answers tasks.get for another user's or another tenant's task with 404 not_found", async () => {
      const owner = await caller('get-own');
      const started = await owner.client.call<Started>('start', { identity: {}, query: '#script finish:mine' });
      const sibling = await caller('get-sib', [], { ...uniqueIdentity('get-sib'), tenant: owner.identity.tenant });
      const stranger = await caller('get-other');
      for (const other of [sibling, stranger]) {
        const error = await refusal(other.client.call('tasks.get', { identity: {}, task_id: started.task_id }));
        expect(error).toMatchObject({ status: 404, code: 'not_found' });
      }
    });
  });

  describe('steering', () => {
    it('cancel stops the run at the next step boundary with task.cancelled', async () => {
      const owner = await caller('cancel');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};tool:echo{"n":2};finish' });
      const invoked = await run.log.next('tool.invoked');
      const answer = await control(owner.client, 'cancel', run.taskId);
      expect(answer).toMatchObject({ accepted: true, method: 'cancel', protocol_version: '0.1.0' });
      const terminal = await run.log.terminal();
      const tail = after(run.log.frames, invoked).map((f) => f.type);
      expect(tail).toEqual(['control.received', 'control.applied', 'tool.completed', 'task.cancelled']);
      expect(payload(terminal)).toMatchObject({ TaskID: run.taskId, Cascaded: false });
      expect(payload(await narrated(run.log, 'cancel'))).toMatchObject({ Outcome: 'cancel_at_next_boundary' });
      await run.log.close();
    });

    it('a hard cancel ends the run at once, and no LLM or tool event of it follows task.cancelled', async () => {
      const owner = await caller('hard');
      const run = await startWatched(owner.client, { query: '#script stream:500/20;finish' });
      await run.log.next('llm.completion.chunk');
      await control(owner.client, 'cancel', run.taskId, { payload: { hard: true } });
      const terminal = await run.log.terminal({ timeoutMs: 5_000 });
      expect(terminal.type).toBe('task.cancelled');
      expect(payload(await narrated(run.log, 'cancel'))).toMatchObject({ Outcome: 'hard_cancel' });
      await barrierRun(owner.client);
      const stored = await storedRunEvents(owner.client, run.taskId);
      const cancelled = stored.find((f) => f.type === 'task.cancelled')!;
      expect(after(stored, cancelled)).toEqual([]);
      expect(stored.filter((f) => f.type === 'llm.completion.chunk').length).toBeLessThan(500);
      await run.log.close();
    });

    it('pause parks the run at the next step boundary: it stays running and pause.list shows the token', async () => {
      const owner = await caller('pause');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};tool:echo{"n":2};finish' });
      try {
        await run.log.next('tool.invoked');
        await control(owner.client, 'pause', run.taskId, { payload: { reason: 'coffee' } });
        expect(payload(await narrated(run.log, 'pause'))).toMatchObject({ Outcome: 'park_at_next_boundary' });
        const requested = await run.log.next('pause.requested');
        expect(payload(requested)).toMatchObject({ Reason: 'coffee' });
        const completed = await run.log.next('tool.completed');
        const detail = await owner.client.call<{ task: { status: string } }>('tasks.get', {
          identity: {},
          task_id: run.taskId,
        });
        const pauses = await owner.client.call<{ items: { token: string; tool?: string }[] }>('pause.list', {
          identity: {},
        });
        expect(detail.task.status).toBe('running');
        expect(pauses.items).toEqual([
          expect.objectContaining({ token: payload(requested)['Token'], task_id: run.taskId }),
        ]);
        expect(pauses.items[0]!.tool).toBeUndefined();

        await control(owner.client, 'cancel', run.taskId);
        await run.log.terminal();
        const parked = after(run.log.frames, completed).map((f) => f.type);
        expect(parked.filter((type) => LLM_OR_TOOL.test(type))).toEqual([]);
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('resume releases a paused run, which then completes', async () => {
      const owner = await caller('resume');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};tool:echo{"n":2};finish' });
      try {
        await run.log.next('tool.invoked');
        await control(owner.client, 'pause', run.taskId);
        const requested = await run.log.next('pause.requested');
        await run.log.next('tool.completed');
        await control(owner.client, 'resume', run.taskId, { payload: { reason: 'back' } });
        expect(payload(await narrated(run.log, 'resume'))).toMatchObject({ Outcome: 'resumed' });
        const resumed = await run.log.next('pause.resumed');
        expect(payload(resumed)).toEqual({ Token: payload(requested)['Token'], Reason: 'back', Decision: 'resume' });
        const terminal = await run.log.terminal();
        expect(terminal.type).toBe('task.completed');
        const applied = run.log.frames.filter((f) => f.type === 'control.applied').map((f) => payload(f)['Type']);
        expect(applied).toEqual(['pause', 'resume']);
        const echo = run.log.frames.find((f) => f.type === 'tool.invoked' && payload(f)['ToolName'] === 'echo')!;
        expect(echo.sequence).toBeGreaterThan(resumed.sequence);
      } finally {
        await hardCancel(owner, run);
      }
    });

    it("redirect rewrites the run's goal, and the next step plans with it", async () => {
      const owner = await caller('redirect');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};finish' });
      try {
        await run.log.next('tool.invoked');
        await control(owner.client, 'redirect', run.taskId, { payload: { goal: 'write a haiku instead' } });
        const applied = await narrated(run.log, 'redirect');
        expect(payload(applied)).toMatchObject({ Outcome: 'goal_rewritten' });
        await run.log.terminal();
        const decision = after(run.log.frames, applied).find((f) => f.type === 'planner.decision')!;
        expect(String(payload(decision)['ReasoningTrace'])).toContain('goal: write a haiku instead');
        const detail = await owner.client.call<{ task: { goal: string } }>('tasks.get', {
          identity: {},
          task_id: run.taskId,
        });
        expect(detail.task.goal).toBe('write a haiku instead');
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('inject_context reaches the next planner step', async () => {
      const owner = await caller('inject');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};finish' });
      try {
        await run.log.next('tool.invoked');
        await control(owner.client, 'inject_context', run.taskId, { payload: { note: 'the user is on mobile' } });
        const applied = await narrated(run.log, 'inject_context');
        expect(payload(applied)).toMatchObject({ Outcome: 'visible_on_next_step' });
        await run.log.terminal();
        const decision = after(run.log.frames, applied).find((f) => f.type === 'planner.decision')!;
        expect(String(payload(decision)['ReasoningTrace'])).toContain('the user is on mobile');
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('user_message reaches the next planner step as a user message', async () => {
      const owner = await caller('message');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};finish' });
      try {
        await run.log.next('tool.invoked');
        await control(owner.client, 'user_message', run.taskId, { payload: { message: 'please be brief' } });
        const applied = await narrated(run.log, 'user_message');
        expect(payload(applied)).toMatchObject({ Outcome: 'visible_on_next_step' });
        await run.log.terminal();
        const decision = after(run.log.frames, applied).find((f) => f.type === 'planner.decision')!;
        expect(String(payload(decision)['ReasoningTrace'])).toContain('user: please be brief');
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('applies a control repeated with the same event_id once', async () => {
      const owner = await caller('event-id');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};finish' });
      try {
        await run.log.next('tool.invoked');
        const body = { payload: { note: 'only once' }, event_id: 'ctl-1' };
        await control(owner.client, 'inject_context', run.taskId, body);
        await control(owner.client, 'inject_context', run.taskId, body);
        // Controls apply in arrival order: once a later one is applied, the repeat was handled.
        await control(owner.client, 'user_message', run.taskId, { payload: { message: 'marker' } });
        await narrated(run.log, 'user_message');
        const received = run.log.frames.filter((f) => f.type === 'control.received').map((f) => payload(f)['Type']);
        expect(received).toEqual(['inject_context', 'user_message']);
        await run.log.terminal();
        const decision = run.log.frames.findLast((f) => f.type === 'planner.decision')!;
        expect(String(payload(decision)['ReasoningTrace']).split('only once')).toHaveLength(2);
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('prioritize by an admin publishes task.prioritised with the prior and new priority', async () => {
      const owner = await caller('prio');
      const admin = await caller('prio-admin', ['admin'], {
        ...uniqueIdentity('prio-admin'),
        tenant: owner.identity.tenant,
      });
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:1000};finish', priority: 2 });
      try {
        await run.log.next('tool.invoked');
        await control(admin.client, 'prioritize', run.taskId, { payload: { priority: 7 } });
        expect(payload(await narrated(run.log, 'prioritize'))).toMatchObject({ Outcome: 'reprioritised' });
        const prioritised = await run.log.next('task.prioritised');
        expect(payload(prioritised)).toEqual({ TaskID: run.taskId, PriorPriority: 2, NewPriority: 7 });
        const detail = await owner.client.call<{ task: { priority: number } }>('tasks.get', {
          identity: {},
          task_id: run.taskId,
        });
        expect(detail.task.priority).toBe(7);
        await run.log.terminal();
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('refuses prioritize by the run owner with 403 scope_mismatch', async () => {
      const owner = await caller('prio-own');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:20000};finish' });
      try {
        await run.log.next('task.started');
        const error = await refusal(control(owner.client, 'prioritize', run.taskId, { payload: { priority: 9 } }));
        expect(error).toMatchObject({ status: 403, code: 'scope_mismatch' });
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('refuses another user of the same tenant and another tenant without admin with 403 scope_mismatch', async () => {
      const owner = await caller('scope');
      const sibling = await caller('scope-sib', [], { ...uniqueIdentity('scope-sib'), tenant: owner.identity.tenant });
      const stranger = await caller('scope-other');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:20000};finish' });
      try {
        await run.log.next('task.started');
        expect(await refusal(control(sibling.client, 'cancel', run.taskId))).toMatchObject({
          status: 403,
          code: 'scope_mismatch',
        });
        expect(await refusal(control(stranger.client, 'cancel', run.taskId))).toMatchObject({
          status: 403,
          code: 'scope_mismatch',
        });
        expect(run.log.types()).not.toContain('control.received');
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('answers a control on a run that already ended with 404 not_found', async () => {
      const owner = await caller('ended');
      const run = await startWatched(owner.client, { query: '#script finish:quick' });
      await run.log.terminal();
      await run.log.close();
      const error = await refusal(control(owner.client, 'pause', run.taskId));
      expect(error).toMatchObject({ status: 404, code: 'not_found' });
    });

    it('refuses a control payload beyond the bounds with 422 payload_invalid', async () => {
      const owner = await caller('bounds');
      const run = await startWatched(owner.client, { query: '#script tool:wait{ms:20000};finish' });
      try {
        await run.log.next('task.started');
        const error = await refusal(
          control(owner.client, 'user_message', run.taskId, { payload: { message: 'x'.repeat(5_000) } }),
        );
        expect(error).toMatchObject({ status: 422, code: 'payload_invalid' });
      } finally {
        await hardCancel(owner, run);
      }
    });
  });

  describe('human approval', () => {
    const GATED = '#script tool:sensitive_action{"what":"launch"};finish:done';

    it('approve lets the gated tool run: tool.approved, pause.resumed, then the tool and the end of the run', async () => {
      const owner = await caller('approve');
      const run = await startWatched(owner.client, { query: GATED });
      try {
        const requested = await run.log.next('tool.approval_requested');
        const token = payload(requested)['PauseToken'];
        expect(payload(requested)).toMatchObject({ Tool: 'sensitive_action', ArgsSummary: { what: 'launch' } });
        expect(payload(await run.log.next('pause.requested'))).toMatchObject({ Token: token });
        expect(run.log.types()).not.toContain('tool.invoked');

        await control(owner.client, 'approve', run.taskId, { payload: { reason: 'looks fine' } });
        expect(payload(await narrated(run.log, 'approve'))).toMatchObject({ Outcome: 'approved' });
        const terminal = await run.log.terminal();
        expect(terminal.type).toBe('task.completed');
        const tail = after(run.log.frames, requested);
        const types = tail.map((f) => f.type);
        expect(types.indexOf('tool.approved')).toBeLessThan(types.indexOf('pause.resumed'));
        expect(types.indexOf('pause.resumed')).toBeLessThan(types.indexOf('tool.invoked'));
        expect(payload(tail.find((f) => f.type === 'tool.approved')!)).toMatchObject({
          Tool: 'sensitive_action',
          PauseToken: token,
          ApproverReason: 'looks fine',
        });
        expect(payload(tail.find((f) => f.type === 'pause.resumed')!)).toMatchObject({
          Token: token,
          Decision: 'approve',
        });
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('resolves one pause token once: of two approvals from two clients, one applies and one is rejected', async () => {
      const owner = await caller('twice');
      const otherClient = await caller('twice', [], { ...owner.identity, session: `${owner.identity.session}-phone` });
      const run = await startWatched(owner.client, {
        query: '#script tool:sensitive_action;tool:wait{ms:20000};finish',
      });
      try {
        const token = payload(await run.log.next('tool.approval_requested'))['PauseToken'];
        await Promise.all([
          control(owner.client, 'approve', run.taskId, { payload: { token } }),
          control(otherClient.client, 'approve', run.taskId, { payload: { token } }),
        ]);
        const rejected = await narrated(run.log, 'approve', 'control.rejected');
        expect(payload(rejected)).toMatchObject({ Reason: 'already_resolved' });
        expect(payload(await narrated(run.log, 'approve'))).toMatchObject({ Outcome: 'approved' });
        await run.log.next('tool.invoked', (f) => payload(f)['ToolName'] === 'wait');
        const types = run.log.types();
        expect(types.filter((t) => t === 'control.received')).toHaveLength(2);
        expect(types.filter((t) => t === 'control.applied')).toHaveLength(1);
        expect(types.filter((t) => t === 'tool.approved')).toHaveLength(1);
        expect(types.filter((t) => t === 'pause.resumed')).toHaveLength(1);
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('ends an approval wait at the policy timeout: tool.rejected, then task.failed with approval_timeout', async () => {
      const owner = await caller('timeout');
      const run = await startWatched(owner.client, { query: '#script tool:side_effect;finish:done' });
      try {
        const requested = await run.log.next('tool.approval_requested');
        const token = payload(requested)['PauseToken'];
        const terminal = await run.log.terminal({ timeoutMs: 10_000 });
        expect(payload(terminal)).toMatchObject({ ErrorCode: 'approval_timeout' });
        expect(payload(await run.log.next('tool.rejected'))).toMatchObject({
          Tool: 'side_effect',
          PauseToken: token,
          Reason: 'approval timed out',
        });
        expect(payload(await run.log.next('pause.resumed'))).toMatchObject({ Token: token, Decision: 'reject' });
        expect(run.log.types()).not.toContain('tool.invoked');
      } finally {
        await hardCancel(owner, run);
      }
    });

    it('reject fails the run with constraints_conflict without running the tool', async () => {
      const owner = await caller('reject');
      const run = await startWatched(owner.client, { query: GATED });
      try {
        const token = payload(await run.log.next('tool.approval_requested'))['PauseToken'];
        await control(owner.client, 'reject', run.taskId, { payload: { reason: 'too risky' } });
        expect(payload(await narrated(run.log, 'reject'))).toMatchObject({ Outcome: 'rejected' });
        const terminal = await run.log.terminal();
        expect(terminal.type).toBe('task.failed');
        expect(payload(terminal)).toMatchObject({ ErrorCode: 'constraints_conflict' });
        expect(payload(await run.log.next('tool.rejected'))).toMatchObject({
          Tool: 'sensitive_action',
          PauseToken: token,
          Reason: 'too risky',
        });
        expect(payload(await run.log.next('pause.resumed'))).toMatchObject({ Token: token, Decision: 'reject' });
        expect(run.log.types()).not.toContain('tool.invoked');
        const pauses = await owner.client.call<{ items: unknown[] }>('pause.list', { identity: {} });
        expect(pauses.items).toEqual([]);
      } finally {
        await hardCancel(owner, run);
      }
    });
  });
});

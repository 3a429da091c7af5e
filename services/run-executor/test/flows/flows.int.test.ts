import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, FlowRunDescription, FlowRunResponse, VerifiedIdentity } from '@ars/contracts';
import { newCaller, startEngineHarness } from '../engine/harness.ts';
import type { EngineHarness, RunWatch } from '../engine/harness.ts';
import { writeFlows } from './flow-fixtures.ts';

/**
 * Flows end to end on a real nats-server with real scripted runs: a flow
 * run's parent task is claimed from RUNS, its steps spawn ordinary runs,
 * and its record tells every step's state and children.
 */

describe('flows', { timeout: 60_000 }, () => {
  let h: EngineHarness;
  let dir: string;
  const tenant = `t-${randomUUID()}`;
  const admin = (): VerifiedIdentity => newCaller({ tenant, scopes: ['admin'] });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-flows-'));
    await writeFlows(dir, tenant);
    h = await startEngineHarness({ FLOWS_DIR: dir, FLOWS_RELOAD_MS: '200' });
  });

  afterAll(async () => {
    await h?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function runFlow(
    caller: VerifiedIdentity,
    body: Record<string, unknown>,
  ): Promise<FlowRunResponse & { watch: RunWatch }> {
    const started = (await h.call('flows.run', body, caller)) as FlowRunResponse;
    return { ...started, watch: await h.watch(caller, started.task_id ?? '') };
  }

  const describeRun = async (caller: VerifiedIdentity, runId: string) =>
    (await h.call('flows.runs.describe', { run_id: runId }, caller)) as FlowRunDescription;

  const answersOf = async (ids: readonly string[]) =>
    Promise.all(ids.map(async (id) => (await h.tasks.getTask(id))?.status));

  it('runs a sequence, passing the first answer into the second query', async () => {
    const caller = admin();
    const { run_id, task_id, watch } = await runFlow(caller, { flow_id: 'sequence', input: { topic: 'otters' } });
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(watch.types()).toContain('flows.run_invoked');
    const invoked = watch.events.find((e) => e.type === 'flows.run_invoked');
    expect(invoked?.payload).toEqual({ FlowID: 'sequence', RunID: run_id });
    const { run, steps } = await describeRun(caller, run_id);
    expect(run).toMatchObject({ status: 'complete', task_id, answer: 'second saw [first-otters]' });
    expect(steps?.map((s) => [s.step_id, s.status, s.answer])).toEqual([
      ['first', 'completed', 'first-otters'],
      ['second', 'completed', 'second saw [first-otters]'],
    ]);
    const children = (await h.tasks.listTasks({ parent_task_id: task_id }, { limit: 10 })).items;
    expect(new Set(children.map((c) => c.task_id))).toEqual(new Set(steps?.flatMap((s) => s.child_task_ids)));
    expect(children.map((c) => c.query).sort()).toEqual([
      '#script finish:first-otters',
      '#script finish:second saw [first-otters]',
    ]);
    expect((await h.tasks.getTask(task_id ?? ''))?.kind).toBe('flow');
  });

  it('fans out three runs and joins their answers in branch order', async () => {
    const caller = admin();
    const { run_id, watch } = await runFlow(caller, { flow_id: 'fanout' });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    const { run, steps } = await describeRun(caller, run_id);
    const fan = steps?.find((s) => s.step_id === 'fan');
    expect(fan?.child_task_ids).toHaveLength(3);
    expect(fan?.answers).toEqual(['b0', 'b1', 'b2']);
    expect(run.answer).toBe('joined b0,b1,b2');
    expect(run.usage?.steps).toBe(5);
    expect(await answersOf(fan?.child_task_ids ?? [])).toEqual(['complete', 'complete', 'complete']);
  });

  it('branches on a failed run: the recovery runs, the happy path is skipped', async () => {
    const caller = admin();
    const { run_id, watch } = await runFlow(caller, { flow_id: 'branchy' });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    const { run, steps } = await describeRun(caller, run_id);
    expect(steps?.map((s) => [s.step_id, s.status])).toEqual([
      ['attempt', 'failed'],
      ['check', 'completed'],
      ['happy', 'skipped'],
      ['done', 'skipped'],
      ['recover', 'completed'],
    ]);
    expect(steps?.[1]?.next).toBe('recover');
    expect(steps?.[2]?.child_task_ids).toEqual([]);
    expect(run.answer).toBe('recovered after failed');
  });

  it('branches on an answer: a match ends the flow, $fail fails it flow_step_failed', async () => {
    const caller = admin();
    const yes = await runFlow(caller, { flow_id: 'matcher', input: { word: 'yes' } });
    const no = await runFlow(caller, { flow_id: 'matcher', input: { word: 'nope' } });
    expect((await yes.watch.terminal(20_000)).type).toBe('task.completed');
    const failed = await no.watch.terminal(20_000);
    yes.watch.stop();
    no.watch.stop();
    expect([failed.type, failed.payload.ErrorCode]).toEqual(['task.failed', 'flow_step_failed']);
    expect((await describeRun(caller, no.run_id)).steps?.[1]?.next).toBe('$fail');
  });

  it('stops at its steps budget with flow.budget_exceeded before spawning past it', async () => {
    const caller = admin();
    const { run_id, task_id, watch } = await runFlow(caller, { flow_id: 'stepcap' });
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect([terminal.type, terminal.payload.ErrorCode]).toEqual(['task.failed', 'flow_budget_exceeded']);
    const exceeded = watch.events.filter((e: EventFrame) => e.type === 'flow.budget_exceeded');
    expect(exceeded.map((e) => e.payload)).toEqual([{ FlowName: 'Capped at two', Axis: 'steps' }]);
    const { run, steps } = await describeRun(caller, run_id);
    expect(run).toMatchObject({ status: 'failed', error_code: 'flow_budget_exceeded' });
    expect(steps?.map((s) => s.status)).toEqual(['completed', 'completed', 'pending']);
    expect((await h.tasks.listTasks({ parent_task_id: task_id }, { limit: 10 })).items).toHaveLength(2);
  });

  it('stops at its wall-time budget and cancels the run in flight', async () => {
    const caller = admin();
    const { run_id, watch } = await runFlow(caller, { flow_id: 'slow' });
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect([terminal.type, terminal.payload.ErrorCode]).toEqual(['task.failed', 'flow_budget_exceeded']);
    expect(watch.events.find((e) => e.type === 'flow.budget_exceeded')?.payload).toEqual({
      FlowName: 'Slow',
      Axis: 'wall_time_ms',
    });
    const { steps } = await describeRun(caller, run_id);
    expect(steps?.[0]?.status).toBe('cancelled');
    const [child] = steps?.[0]?.child_task_ids ?? [];
    const childWatch = await h.watch(caller, child ?? '');
    expect((await childWatch.terminal(10_000)).type).toBe('task.cancelled');
    childWatch.stop();
  });

  it('is idempotent by idempotency_key: the same key answers the first run', async () => {
    const caller = admin();
    const body = { flow_id: 'sequence', input: { topic: 'x' }, idempotency_key: 'k-1' };
    const first = (await h.call('flows.run', body, caller)) as FlowRunResponse;
    const again = (await h.call('flows.run', body, caller)) as FlowRunResponse;
    expect(again).toEqual(first);
    const runs = (await h.call('flows.runs.list', { filter: { flow_id: 'sequence' } }, caller)) as {
      items: { run_id: string; idempotency_key?: string }[];
    };
    expect(runs.items.filter((r) => r.idempotency_key === 'k-1').map((r) => r.run_id)).toEqual([first.run_id]);
  });

  it('cancels a flow: its children are cancelled and the flow ends cancelled', async () => {
    const caller = admin();
    const { run_id, task_id, watch } = await runFlow(caller, { flow_id: 'cancellable' });
    // Both children waiting: the flow is in its parallel step.
    await watch.until((e) => e.type === 'task.started');
    for (;;) {
      const { steps } = await describeRun(caller, run_id);
      if ((steps?.[0]?.child_task_ids.length ?? 0) === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await h.control('cancel', task_id ?? '', caller, { hard: true });
    expect((await watch.terminal(10_000)).type).toBe('task.cancelled');
    watch.stop();
    const { run, steps } = await describeRun(caller, run_id);
    expect(run.status).toBe('cancelled');
    for (const child of steps?.[0]?.child_task_ids ?? []) {
      const childWatch = await h.watch(caller, child);
      expect((await childWatch.terminal(10_000)).type).toBe('task.cancelled');
      childWatch.stop();
    }
  });

  describe('reads', () => {
    /** The flows.page_viewed events of a caller's session, once `count` are stored. */
    async function pageViews(caller: VerifiedIdentity, count: number) {
      const watch = await h.watch(caller, '');
      try {
        await watch.until(() => watch.events.filter((e) => e.type === 'flows.page_viewed').length >= count);
        return watch.events.filter((e) => e.type === 'flows.page_viewed').map((e) => e.payload);
      } finally {
        watch.stop();
      }
    }

    it("lists the tenant's flows, valid and invalid, a page at a time", async () => {
      const caller = newCaller({ tenant });
      const first = (await h.call('flows.list', { limit: 3 }, caller)) as {
        items: { flow_id: string; status: string; version: string }[];
        next_cursor?: string;
      };
      expect(first.items.map((f) => f.flow_id)).toEqual(['branchy', 'broken', 'cancellable']);
      expect(first.items.map((f) => f.status)).toEqual(['valid', 'invalid', 'valid']);
      expect(first.items[0]?.version).toMatch(/^sha256:/);
      const rest = (await h.call('flows.list', { cursor: first.next_cursor, limit: 100 }, caller)) as {
        items: { flow_id: string }[];
        next_cursor?: string;
      };
      expect(rest.items.map((f) => f.flow_id)).toEqual(['fanout', 'matcher', 'sequence', 'slow', 'stepcap']);
      expect(rest.next_cursor).toBeUndefined();
      const text = (await h.call('flows.list', { filter: { text: 'three at' } }, caller)) as { items: unknown[] };
      expect(text.items).toHaveLength(1);
      expect(await pageViews(caller, 3)).toEqual([
        { Method: 'flows.list', FlowID: '', AdminScoped: false },
        { Method: 'flows.list', FlowID: '', AdminScoped: false },
        { Method: 'flows.list', FlowID: '', AdminScoped: false },
      ]);
    });

    it("fans an admin's flows.list in across tenants", async () => {
      const caller = admin();
      const other = (await h.call('flows.list', { filter: { tenant_ids: ['nobody-here'] } }, caller)) as {
        items: unknown[];
      };
      expect(other.items).toEqual([]);
      const both = (await h.call('flows.list', { filter: { tenant_ids: [tenant, 'nobody-here'] } }, caller)) as {
        items: { tenant: string }[];
      };
      expect(new Set(both.items.map((f) => f.tenant))).toEqual(new Set([tenant]));
      expect(await pageViews(caller, 2)).toEqual([
        { Method: 'flows.list', FlowID: '', AdminScoped: true },
        { Method: 'flows.list', FlowID: '', AdminScoped: true },
      ]);
    });

    it('describes a flow with its recent runs, filters runs, and counts them in metrics', async () => {
      const caller = admin();
      const ran = await runFlow(caller, { flow_id: 'sequence', input: { topic: 'metrics' } });
      await ran.watch.terminal(20_000);
      ran.watch.stop();
      const reader = newCaller({ tenant });
      const described = (await h.call('flows.describe', { flow_id: 'sequence' }, reader)) as {
        flow: { name: string; input_schema: unknown; steps: unknown[] };
        recent_runs: { run_id: string }[];
      };
      expect(described.flow).toMatchObject({ name: 'Two in a row', input_schema: { required: ['topic'] } });
      expect(described.flow.steps).toHaveLength(2);
      expect(described.recent_runs.map((r) => r.run_id)).toContain(ran.run_id);
      const complete = (await h.call(
        'flows.runs.list',
        { filter: { flow_id: 'sequence', status: ['complete'] } },
        reader,
      )) as { items: { run_id: string; status: string }[] };
      expect(complete.items.map((r) => r.run_id)).toContain(ran.run_id);
      expect(new Set(complete.items.map((r) => r.status))).toEqual(new Set(['complete']));
      const none = (await h.call(
        'flows.runs.list',
        { filter: { flow_id: 'sequence', since: new Date(Date.now() + 60_000).toISOString() } },
        reader,
      )) as { items: unknown[] };
      expect(none.items).toEqual([]);
      const metrics = (await h.call('flows.metrics', { flow_id: 'sequence' }, reader)) as {
        items: { flow_id: string; runs: number; completed: number; p50_ms?: number }[];
      };
      expect(metrics.items).toHaveLength(1);
      expect(metrics.items[0]?.completed).toBeGreaterThanOrEqual(1);
      expect(metrics.items[0]?.runs).toBeGreaterThanOrEqual(complete.items.length);
      expect(metrics.items[0]?.p50_ms).toBeGreaterThan(0);
      expect(await pageViews(reader, 4)).toEqual([
        { Method: 'flows.describe', FlowID: 'sequence', AdminScoped: false },
        { Method: 'flows.runs.list', FlowID: 'sequence', AdminScoped: false },
        { Method: 'flows.runs.list', FlowID: 'sequence', AdminScoped: false },
        { Method: 'flows.metrics', FlowID: 'sequence', AdminScoped: false },
      ]);
    });
  });

  describe('refusals', () => {
    it('refuses flows.run without admin (identity_scope_required)', async () => {
      const caller = newCaller({ tenant });
      await expect(h.call('flows.run', { flow_id: 'sequence', input: { topic: 'x' } }, caller)).rejects.toMatchObject({
        code: 'identity_scope_required',
      });
    });

    it('answers not_found for a flow the tenant has no file of', async () => {
      await expect(h.call('flows.run', { flow_id: 'nowhere' }, admin())).rejects.toMatchObject({ code: 'not_found' });
      await expect(h.call('flows.describe', { flow_id: 'nowhere' }, admin())).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it("refuses input the flow's input_schema refuses, and input a template needs but lacks", async () => {
      await expect(h.call('flows.run', { flow_id: 'sequence', input: { topic: 7 } }, admin())).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/topic/),
      });
      await expect(h.call('flows.run', { flow_id: 'matcher', input: {} }, admin())).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/input\.word/),
      });
    });

    it('refuses to run an invalid flow (conflict) and lists it with its problems', async () => {
      await expect(h.call('flows.run', { flow_id: 'broken' }, admin())).rejects.toMatchObject({ code: 'conflict' });
      const { flow } = (await h.call('flows.describe', { flow_id: 'broken' }, admin())) as {
        flow: { status: string; problems: string[] };
      };
      expect(flow.status).toBe('invalid');
      expect(flow.problems.join(' ')).toMatch(/steps\.0/);
    });

    it("refuses a non-admin's fan-in across tenants (scope_mismatch)", async () => {
      const caller = newCaller({ tenant });
      await expect(h.call('flows.list', { filter: { tenant_ids: ['someone-else'] } }, caller)).rejects.toMatchObject({
        code: 'scope_mismatch',
      });
      await expect(
        h.call('flows.runs.list', { filter: { tenant_ids: ['someone-else'] } }, caller),
      ).rejects.toMatchObject({ code: 'scope_mismatch' });
    });

    it("answers not_found for another tenant's flow run without admin", async () => {
      const { run_id, watch } = await runFlow(admin(), { flow_id: 'sequence', input: { topic: 'y' } });
      watch.stop();
      await expect(describeRun(newCaller(), run_id)).rejects.toMatchObject({ code: 'not_found' });
    });
  });
});

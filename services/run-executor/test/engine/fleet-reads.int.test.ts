import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeOf } from '@ars/service-kit/testing';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/** The run-executor's fleet reads (`_tasks.agent_*`) over the tasks of real runs. */
describe('fleet reads of the run-executor', () => {
  let h: EngineHarness;
  const caller = newCaller();
  const since = new Date(Date.now() - 1_000).toISOString();
  /** Calls an internal endpoint (its body takes no `identity` member). */
  const internal = (endpoint: string, body: Record<string, unknown>, who = caller) =>
    h.service.call(endpoint, body, who);

  beforeAll(async () => {
    h = await startEngineHarness();
    h.agentConfigs.set('worker', {});
    for (const query of ['#script tool:echo{};finish:ok', '#script finish:ok', '#script tool:echo{broken']) {
      const { watch } = await h.start(caller, { query, agent_id: 'worker' });
      await watch.terminal();
    }
    const { watch } = await h.start(caller, { query: '#script finish:ok' });
    await watch.terminal();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('counts an agent’s queued and in-flight runs, a run naming no agent as the default agent’s', async () => {
    const live = await h.start(caller, { query: '#script tool:wait{ms:30000};finish:ok', agent_id: 'worker' });
    await live.watch.until((e) => e.type === 'tool.invoked');
    const counts = await internal(
      '_tasks.agent_runs',
      { tenant: caller.tenant, agent_ids: ['worker', 'default'] },
      caller,
    );
    expect(counts).toEqual({
      items: [
        { agent_id: 'worker', pending: 0, running: 1 },
        { agent_id: 'default', pending: 0, running: 0 },
      ],
      complete: true,
    });
    await h.control('cancel', live.taskId, caller, { hard: true });
    await live.watch.terminal();
  });

  it('answers an agent’s run figures over a window from its stored tasks', async () => {
    const reply = (await internal(
      '_tasks.agent_metrics',
      { tenant: caller.tenant, agent_id: 'worker', since },
      caller,
    )) as {
      counters: Record<string, number>;
    };
    expect(reply.counters).toMatchObject({ runs_started: 4, runs_completed: 2, runs_failed: 1, runs_cancelled: 1 });
    expect(reply.counters.planner_steps).toBeGreaterThanOrEqual(3);
    expect(reply.counters.duration_ms_max).toBeGreaterThanOrEqual(reply.counters.duration_ms_p50 ?? 0);
    const before = (await internal(
      '_tasks.agent_metrics',
      { tenant: caller.tenant, agent_id: 'worker', until: since },
      caller,
    )) as { counters: Record<string, number> };
    expect(before.counters.runs_started).toBe(0);
  });

  it('answers the outcomes of the runs ended since an instant, by tenant and agent', async () => {
    const reply = (await internal('_tasks.agent_outcomes', { since }, caller)) as {
      items: { tenant: string; agent_id: string }[];
    };
    const mine = reply.items.filter((i) => i.tenant === caller.tenant);
    expect(mine).toEqual(
      expect.arrayContaining([
        { tenant: caller.tenant, agent_id: 'worker', completed: 2, failed: 1, cancelled: 1 },
        { tenant: caller.tenant, agent_id: 'default', completed: 1, failed: 0, cancelled: 0 },
      ]),
    );
  });

  it('counts another tenant’s runs for console:fleet (agents.list fan-in) but keeps its figures admin-only', async () => {
    const watcher = { ...newCaller(), scopes: ['console:fleet'] };
    const counted = await outcomeOf(
      internal('_tasks.agent_runs', { tenant: caller.tenant, agent_ids: ['worker'] }, watcher),
    );
    expect(counted).toMatchObject({ ok: true, result: { items: [{ agent_id: 'worker' }], complete: true } });
    const figures = await outcomeOf(
      internal('_tasks.agent_metrics', { tenant: caller.tenant, agent_id: 'worker' }, watcher),
    );
    expect(figures).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });

  it('refuses another tenant’s counts without admin or console:fleet', async () => {
    const stranger = newCaller();
    const refused = await outcomeOf(
      internal('_tasks.agent_runs', { tenant: caller.tenant, agent_ids: ['worker'] }, stranger),
    );
    expect(refused).toMatchObject({ ok: false, code: 'scope_mismatch' });
    const bad = await outcomeOf(internal('_tasks.agent_runs', { tenant: caller.tenant, agent_ids: [] }, caller));
    expect(bad).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});

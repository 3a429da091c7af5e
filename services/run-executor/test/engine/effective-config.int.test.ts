import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, storedEvents } from '@ars/service-kit/testing';
import { newTaskRecord } from '../../src/domain/start.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { newCaller, untilRedelivered, watchRun } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * A run's effective configuration with the real agent-registry and
 * governance: each layer (agent revision, tenant overrides, user variant,
 * session prompt and skills, run overrides) changes what the scripted
 * provider receives (`#script inspect` reports its request on
 * `planner.decision` ReasoningTrace), and the result is recorded on the task.
 */

interface Inspected {
  system: string;
  params: Record<string, unknown>;
  tools: string[];
}

const inspectedOf = (events: readonly EventFrame[]): Inspected => {
  const decision = events.find((e) => e.type === 'planner.decision');
  return JSON.parse(String(decision?.payload.ReasoningTrace)) as Inspected;
};

describe('effective configuration of a run', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness(['governance', 'agent-registry']);
  });

  afterAll(async () => {
    await h?.stop();
  });

  const as = (caller: VerifiedIdentity, scopes: string[]) => ({ ...caller, scopes });

  async function inspect(caller: VerifiedIdentity, agentId = 'helper'): Promise<{ seen: Inspected; taskId: string }> {
    const { taskId, watch } = await h.run(caller, { query: '#script inspect', agent_id: agentId });
    expect(watch.events.at(-1)?.type).toBe('task.completed');
    return { seen: inspectedOf(watch.events), taskId };
  }

  it('applies every layer in order, each changing what the provider receives', async () => {
    const caller = newCaller();
    const admin = as(caller, ['admin']);
    const setRevision = (text: string) =>
      h.call(
        'agent-registry',
        'agent_config.set_revision',
        { agent_id: 'helper', config: { prompt_layers: [{ name: 'base', text }], llm_params: { temperature: 0.1 } } },
        admin,
      );

    await setRevision('AGENT v1');
    const agentV1 = await inspect(caller);
    expect(agentV1.seen.system).toContain('AGENT v1');
    expect(agentV1.seen.params).toMatchObject({ temperature: 0.1 });

    await setRevision('AGENT v2');
    const agentV2 = await inspect(caller);
    expect(agentV2.seen.system).toContain('AGENT v2');
    expect(agentV2.seen.system).not.toContain('AGENT v1');

    await h.call(
      'governance',
      'governance.set_tenant_overrides',
      { overrides: { temperature: 0.5, extra_instructions: 'TENANT RULES' } },
      admin,
    );
    const tenant = await inspect(caller);
    expect(tenant.seen.params).toMatchObject({ temperature: 0.5 });
    expect(tenant.seen.system).toContain('TENANT RULES');

    await h.call(
      'agent-registry',
      'agent_config.user.set_revision',
      { agent_id: 'helper', config: { llm_params: { max_tokens: 222, top_p: 0.3 } } },
      as(caller, ['agent_config:user']),
    );
    const variant = await inspect(caller);
    expect(variant.seen.params).toMatchObject({ temperature: 0.5, max_tokens: 222, top_p: 0.3 });

    await h.call('agent-registry', 'agent_config.session.set_user_prompt', { prompt: 'SESSION PROMPT' }, caller);
    await h.call(
      'agent-registry',
      'agent_config.session.skills.upsert',
      { skill: { name: 'house-style', content: 'SKILL TEXT' } },
      caller,
    );
    const session = await inspect(caller);
    expect(session.seen.system).toContain('SESSION PROMPT');
    expect(session.seen.system).toContain('SKILL TEXT');

    await h.call(
      'run-executor',
      'runs.set_overrides',
      { overrides: { temperature: 0.9, system_prompt: 'RUN PROMPT', extra_instructions: 'RUN EXTRA' } },
      caller,
    );
    const run = await inspect(caller);
    expect(run.seen.params).toMatchObject({ temperature: 0.9, max_tokens: 222 });
    expect(run.seen.system.startsWith('RUN PROMPT')).toBe(true);
    expect(run.seen.system).not.toContain('AGENT v2');
    for (const kept of ['SESSION PROMPT', 'TENANT RULES', 'SKILL TEXT', 'RUN EXTRA'])
      expect(run.seen.system).toContain(kept);
    // The order: prompt layers, then extra blocks (tenant, skills, run), then the goal.
    const at = (text: string) => run.seen.system.indexOf(text);
    expect(at('SESSION PROMPT')).toBeLessThan(at('TENANT RULES'));
    expect(at('TENANT RULES')).toBeLessThan(at('SKILL TEXT'));
    expect(at('SKILL TEXT')).toBeLessThan(at('RUN EXTRA'));
    expect(at('RUN EXTRA')).toBeLessThan(at('Goal: #script inspect'));

    const hashes = await Promise.all(
      [agentV1, agentV2, tenant, variant, session, run].map(async (r) => (await h.recorded(r.taskId))?.content_hash),
    );
    expect(new Set(hashes).size).toBe(6);
    const recorded = await h.recorded(run.taskId);
    expect(recorded).toMatchObject({
      agent_id: 'helper',
      revision_id: expect.any(String),
      variant_revision_id: expect.any(String),
      source: 'agent-registry',
      content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      skills: [expect.objectContaining({ name: 'house-style', scope: 'session' })],
    });
    expect(recorded?.layers.map((l) => [l.layer, l.applied_keys.length > 0])).toEqual([
      ['agent', true],
      ['tenant_overrides', true],
      ['user_variant', true],
      ['session', true],
      ['skills', true],
      ['run_overrides', true],
    ]);
    expect(recorded?.layers.at(-1)?.applied_keys).toEqual([
      'llm_params.temperature',
      'prompt_layers',
      'extra_system_blocks',
    ]);
  });

  it('runs the default agent on its built-in configuration through the registry (revision null)', async () => {
    const caller = newCaller();
    const { seen, taskId } = await inspect(caller, 'default');
    expect(seen.params).toMatchObject({ model: 'scripted' });
    expect(await h.recorded(taskId)).toMatchObject({
      agent_id: 'default',
      revision_id: null,
      source: 'agent-registry',
    });
  });

  it('fails a run whose agent was retired between its start and its claim with agent_unavailable', async () => {
    const caller = newCaller();
    const admin = as(caller, ['admin']);
    await h.call('agent-registry', 'agent_config.set_revision', { agent_id: 'fleeting', config: {} }, admin);
    await h.call('agent-registry', 'agent_config.retire', { agent_id: 'fleeting' }, admin);
    // A task start accepted before the retirement, claimed after it.
    const task = newTaskRecord({
      taskId: randomUUID(),
      triple: caller,
      request: { identity: {}, query: '#script finish:never', agent_id: 'fleeting' },
      agent: { agent_id: 'fleeting' },
      artifacts: [],
      now: new Date().toISOString(),
    });
    await h.tasks.insertTask(task);
    const watch = await watchRun(h.bus, caller, task.task_id);
    await enqueueRun(h.bus, task);
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: task.task_id, ErrorCode: 'agent_unavailable' });
    expect(watch.events.some((e) => e.type === 'planner.decision')).toBe(false);
  });

  it("never runs without the tenant's overrides: while governance does not answer them the run waits, unresolved", async () => {
    const caller = newCaller();
    await h.call(
      'governance',
      'governance.set_tenant_overrides',
      { overrides: { extra_instructions: 'TENANT ONLY RULES' } },
      as(caller, ['admin']),
    );
    await h.peers.stop(['governance']);
    const { taskId, watch } = await h.start(caller, { query: '#script inspect', agent_id: 'default' });
    await untilRedelivered(h.bus);
    // Nothing resolved (nor recorded, which a later claim would reuse) without the overrides, nothing called.
    expect(await h.recorded(taskId)).toBeUndefined();
    expect(watch.types().some((type) => type.startsWith('planner.') || type.startsWith('llm.'))).toBe(false);

    await h.peers.restart('governance');
    const terminal = await watch.terminal(30_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(inspectedOf(watch.events).system).toContain('TENANT ONLY RULES');
    expect((await h.recorded(taskId))?.layers[1]).toEqual({
      layer: 'tenant_overrides',
      applied_keys: ['extra_system_blocks'],
    });
  });
});

describe('runs.set_overrides', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness([]);
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('stores the members for the verified session and publishes runs.overrides_set with its Set* flags', async () => {
    const caller = newCaller();
    const answer = await h.call(
      'run-executor',
      'runs.set_overrides',
      { overrides: { model: 'gpt-x', temperature: 0.3, max_tokens: 50 } },
      caller,
    );
    expect(answer).toEqual({
      session_id: caller.session,
      overrides: { model: 'gpt-x', temperature: 0.3, max_tokens: 50 },
      updated_at: expect.any(String),
    });
    const cleared = await h.call(
      'run-executor',
      'runs.set_overrides',
      { overrides: { model: null, reasoning_effort: 'low' } },
      caller,
    );
    expect(cleared).toMatchObject({ overrides: { temperature: 0.3, max_tokens: 50, reasoning_effort: 'low' } });
    expect((cleared as { overrides: object }).overrides).not.toHaveProperty('model');

    const events = await storedEvents(h.bus, {
      tenant: caller.tenant,
      user: caller.user,
      session: caller.session,
      type: 'runs.overrides_set',
    });
    expect(events.map((e) => e.payload)).toEqual([
      {
        Actor: { tenant: caller.tenant, user: caller.user, session: caller.session, run: '' },
        SessionID: caller.session,
        SetReasoningEffort: false,
        SetTemperature: true,
        SetMaxTokens: true,
        SetSystemPrompt: false,
        SetExtraInstructions: false,
        SetModel: true,
        OccurredAt: expect.any(String),
      },
      expect.objectContaining({ SetModel: true, SetReasoningEffort: true, SetTemperature: false }),
    ]);
  });

  it("changes the session's next runs only, not another session's", async () => {
    const caller = newCaller();
    await h.call(
      'run-executor',
      'runs.set_overrides',
      { overrides: { temperature: 1.5, system_prompt: 'MINE' } },
      caller,
    );
    const mine = await h.run(caller, { query: '#script inspect' });
    const other = await h.run({ ...caller, session: `${caller.session}-other` }, { query: '#script inspect' });
    expect(inspectedOf(mine.watch.events)).toMatchObject({
      params: { temperature: 1.5 },
      system: expect.stringContaining('MINE'),
    });
    expect(inspectedOf(other.watch.events).params).not.toHaveProperty('temperature');
    // The harness's stand-in registry answered the default agent's configuration (no revision).
    expect(await h.recorded(mine.taskId)).toMatchObject({
      source: 'agent-registry',
      revision_id: null,
      layers: expect.arrayContaining([expect.objectContaining({ layer: 'run_overrides' })]),
    });
  });

  it("erases a session's overrides and recorded configurations with the session", async () => {
    const caller = newCaller();
    await h.call('run-executor', 'runs.set_overrides', { overrides: { temperature: 0.4, model: 'm' } }, caller);
    await h.run(caller, { query: '#script finish:ok' });
    const triple = { tenant: caller.tenant, user: caller.user, session: caller.session };
    const erased = (await h.call('run-executor', '_tasks.erase_session', triple, caller)) as {
      state_records_deleted: number;
    };
    // The overrides document and the run's configuration body (plus the session's turns).
    expect(erased.state_records_deleted).toBeGreaterThanOrEqual(2);
    const after = await h.call('run-executor', 'runs.set_overrides', { overrides: { max_tokens: 9 } }, caller);
    expect(after).toMatchObject({ overrides: { max_tokens: 9 } });
    expect((after as { overrides: object }).overrides).not.toHaveProperty('temperature');
  });

  it('refuses an unknown member and an out-of-range value with invalid_request', async () => {
    const caller = newCaller();
    for (const overrides of [{ colour: 'blue' }, { temperature: 3 }]) {
      expect(await outcomeOf(h.call('run-executor', 'runs.set_overrides', { overrides }, caller))).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Retirement {
  agent_id: string;
  operation_hash: string;
  stage: string;
  generation: number;
  started_at: string;
}

const RETIREMENT_KEYS = ['AgentID', 'Completed', 'Generation', 'OccurredAt', 'OperationHash', 'Stage', 'Total'];

describe('agent_config.retire', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('retire');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const resolve = (who: VerifiedIdentity, agentId: string) =>
    h.service.rpc.call('agent-registry', '_agent.resolve', who, { tenant: who.tenant, agent_id: agentId });
  const effective = (who: VerifiedIdentity, agentId: string) =>
    h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      agent_id: agentId,
    });
  const retire = (admin: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    h.call<Retirement>('agent_config.retire', { agent_id: 'helper', ...body }, admin);

  /**
   * A tenant whose agent "helper" carries two variant revisions (one user),
   * one session setting naming it and one agent skill; plus a tenant skill
   * and an every-agent session setting that retirement must leave alone.
   */
  async function populated(): Promise<VerifiedIdentity> {
    const admin = h.caller(['admin', 'agent_config:user']);
    await h.call('agent_config.set_revision', { agent_id: 'helper', config: { llm_params: { model: 'm' } } }, admin);
    await h.call('agent_config.user.set_revision', { agent_id: 'helper', config: { skills: [] } }, admin);
    await h.call('agent_config.user.set_revision', { agent_id: 'helper', config: { skills: ['a'] } }, admin);
    await h.call('agent_config.session.set_user_prompt', { agent_id: 'helper', prompt: 'p' }, admin);
    await h.call('agent_config.session.set_user_prompt', { prompt: 'every agent' }, admin);
    await h.call('agent_config.skills.upsert', { agent_id: 'helper', skill: { name: 's', content: 'c' } }, admin);
    await h.call('agent_config.skills.upsert', { skill: { name: 't', content: 'tenant' } }, admin);
    return admin;
  }

  it('runs its stages and publishes started, one progress per stage and completed, with the spec keys', async () => {
    const admin = await populated();
    const result = await retire(admin, { reason: 'replaced' });
    expect(result).toEqual({
      agent_id: 'helper',
      operation_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      stage: 'completed',
      generation: 1,
      started_at: expect.any(String),
    });
    const started = await h.events(admin.tenant, 'agent_config.retirement.started');
    const progress = await h.events(admin.tenant, 'agent_config.retirement.progress');
    const completed = await h.events(admin.tenant, 'agent_config.retirement.completed');
    expect(started).toHaveLength(1);
    expect(payloadKeys(started[0])).toEqual(RETIREMENT_KEYS);
    expect(started[0]?.payload).toMatchObject({
      AgentID: 'helper',
      OperationHash: result.operation_hash,
      Stage: 'started',
      Completed: 0,
      Total: 4,
      Generation: 1,
    });
    expect(progress.map((f) => payloadKeys(f))).toEqual(Array(3).fill([...RETIREMENT_KEYS, 'class'].sort()));
    expect(progress.map((f) => f.payload)).toMatchObject([
      { Stage: 'user_variants', class: 'user_variant_revision', Completed: 2, Total: 4 },
      { Stage: 'session_settings', class: 'session_setting', Completed: 3, Total: 4 },
      { Stage: 'agent_skills', class: 'skill', Completed: 4, Total: 4 },
    ]);
    expect(completed).toHaveLength(1);
    expect(payloadKeys(completed[0])).toEqual(RETIREMENT_KEYS);
    expect(completed[0]?.payload).toMatchObject({ Stage: 'completed', Completed: 4, Total: 4, Generation: 1 });
  });

  it('refuses new starts exactly as an unknown agent, in resolve and in the effective configuration', async () => {
    const admin = await populated();
    await retire(admin);
    const retired = await h.outcome('agent_config.get', { agent_id: 'helper' }, admin);
    expect(retired.ok).toBe(true);
    const text = (o: { ok: boolean; message?: string }, id: string) =>
      o.ok ? '' : (o.message ?? '').replace(id, '<id>');
    const resolved = await outcomeOf(resolve(admin, 'helper'));
    const unknown = await outcomeOf(resolve(admin, 'never'));
    expect(resolved).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(text(resolved, 'helper')).toBe(text(unknown, 'never'));
    expect(await outcomeOf(effective(admin, 'helper'))).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('releases what was layered on the agent and leaves the rest', async () => {
    const admin = await populated();
    await retire(admin);
    await expect(h.call('agent_config.user.list_revisions', { agent_id: 'helper' }, admin)).resolves.toEqual({
      items: [],
    });
    await expect(h.call('agent_config.skills.list', { agent_id: 'helper' }, admin)).resolves.toEqual({ items: [] });
    const tenantSkills = await h.call<{ items: { name: string }[] }>('agent_config.skills.list', {}, admin);
    expect(tenantSkills.items.map((s) => s.name)).toEqual(['t']);
    const house = (await effective(admin, 'default')) as { config: { prompt_layers: { text: string }[] } };
    expect(house.config.prompt_layers.at(-1)?.text).toBe('every agent');
    const history = await h.call<{ items: unknown[] }>('agent_config.list_revisions', { agent_id: 'helper' }, admin);
    expect(history.items).toHaveLength(1);
  });

  it('refuses setters, rollback, variants, agent skills and session settings of a retired agent with conflict', async () => {
    const admin = await populated();
    const head = await h.call<{ revision: { revision_id: string } }>('agent_config.get', { agent_id: 'helper' }, admin);
    await retire(admin);
    const refused: [string, Record<string, unknown>][] = [
      ['agent_config.set_llm_params', { agent_id: 'helper', params: {} }],
      ['agent_config.rollback', { agent_id: 'helper', to_revision_id: head.revision.revision_id }],
      ['agent_config.user.set_revision', { agent_id: 'helper', config: {} }],
      ['agent_config.skills.upsert', { agent_id: 'helper', skill: { name: 'x', content: 'y' } }],
      ['agent_config.session.set_user_prompt', { agent_id: 'helper', prompt: 'x' }],
    ];
    for (const [method, body] of refused) {
      expect([method, await h.outcome(method, body, admin)]).toMatchObject([method, { ok: false, code: 'conflict' }]);
    }
  });

  it('answers a second retire with the same retirement and no new events', async () => {
    const admin = await populated();
    const first = await retire(admin);
    const second = await retire(admin);
    expect(second).toEqual(first);
    expect(await h.events(admin.tenant, 'agent_config.retirement.started')).toHaveLength(1);
    expect(await h.events(admin.tenant, 'agent_config.retirement.completed')).toHaveLength(1);
  });

  it('is reinstated by set_revision, and a later retirement is the next generation', async () => {
    const admin = await populated();
    const first = await retire(admin);
    await h.call('agent_config.set_revision', { agent_id: 'helper', config: { skills: ['back'] } }, admin);
    await expect(resolve(admin, 'helper')).resolves.toMatchObject({ config: { skills: ['back'] } });
    const second = await retire(admin);
    expect(second.generation).toBe(2);
    expect(second.operation_hash).not.toBe(first.operation_hash);
    const completed = await h.events(admin.tenant, 'agent_config.retirement.completed');
    expect(completed.map((f) => (f.payload as { Generation: number }).Generation)).toEqual([1, 2]);
  });

  it('lets two concurrent retire calls produce one retirement', async () => {
    const admin = await populated();
    const [a, b] = await Promise.all([retire(admin), retire(admin)]);
    expect(a.operation_hash).toBe(b.operation_hash);
    expect(await h.events(admin.tenant, 'agent_config.retirement.completed')).toHaveLength(1);
    await expect(h.call('agent_config.skills.list', { agent_id: 'helper' }, admin)).resolves.toEqual({ items: [] });
  });

  it('refuses the default agent with invalid_request and an agent without a revision with not_found', async () => {
    const admin = h.caller();
    expect(await h.outcome('agent_config.retire', { agent_id: 'default' }, admin)).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
    expect(await h.outcome('agent_config.retire', { agent_id: 'nobody' }, admin)).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    const owner = await populated();
    expect(await h.outcome('agent_config.retire', { agent_id: 'helper' }, h.caller())).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    await expect(resolve(owner, 'helper')).resolves.toMatchObject({ agent_id: 'helper' });
  });

  it('refuses a reason longer than 1024 characters with invalid_request', async () => {
    expect(
      await h.outcome('agent_config.retire', { agent_id: 'helper', reason: 'x'.repeat(1025) }, h.caller()),
    ).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
  });
});

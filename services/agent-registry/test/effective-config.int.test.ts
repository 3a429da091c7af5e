import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { connectBus, serveService } from '@ars/bus';
import type { Bus, ServedService } from '@ars/bus';
import { outcomeOf } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Effective {
  agent_id: string;
  revision_id: string | null;
  variant_revision_id?: string;
  config: {
    prompt_layers?: { name: string; text: string }[];
    extra_system_blocks?: { name?: string; text: string }[];
    llm_params?: Record<string, unknown>;
    llm_provider?: Record<string, unknown>;
    skills?: string[];
    mcp_connections?: { server_id: string }[];
  };
  source_disables: string[];
  approval_policies?: Record<string, unknown>;
  skills: { name: string; scope: string; origin: string; content_hash: string }[];
  layers: { layer: string; revision_id?: string | null; applied_keys: string[] }[];
  content_hash: string;
}

describe('_agent.effective_config', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('effective');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const effective = (who: VerifiedIdentity, agentId = 'helper', body: Record<string, unknown> = {}) =>
    h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      agent_id: agentId,
      ...body,
    }) as Promise<Effective>;

  describe('resolution', () => {
    it('resolves the default agent to its built-in configuration, every layer listed in order', async () => {
      const who = h.caller([]);
      await expect(effective(who, 'default')).resolves.toEqual({
        agent_id: 'default',
        revision_id: null,
        config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
        source_disables: [],
        skills: [],
        layers: [
          { layer: 'agent', revision_id: null, applied_keys: ['llm_provider'] },
          { layer: 'tenant_overrides', applied_keys: [] },
          { layer: 'user_variant', applied_keys: [] },
          { layer: 'session', applied_keys: [] },
          { layer: 'skills', applied_keys: [] },
        ],
        content_hash: expect.stringMatching(/^sha256:/),
        approval_policies: {},
      });
    });

    it("carries the tenant's approval policies, built-ins included, and not another tenant's", async () => {
      const admin = h.caller(['admin']);
      await h.call('tools.set_approval_policy', { name: 'echo', policy: { mode: 'always', timeout_seconds: 60 } }, admin);
      const own = await effective({ ...admin, scopes: [] }, 'default');
      expect(own.approval_policies).toEqual({ echo: { mode: 'always', timeout_seconds: 60, on_timeout: 'reject' } });
      expect((await effective(h.caller([]), 'default')).approval_policies).toEqual({});
    });

    it("refuses an unknown agent and another tenant's exactly as _agent.resolve does", async () => {
      const owner = h.caller(['admin']);
      await h.call('agent_config.set_revision', { agent_id: 'helper', config: {} }, owner);
      const stranger = h.caller([]);
      const foreign = await outcomeOf(effective(stranger));
      const unknown = await outcomeOf(effective(stranger, 'never'));
      expect(foreign).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(unknown).toMatchObject({ ok: false, code: 'invalid_request' });
      const resolve = await outcomeOf(
        h.service.rpc.call('agent-registry', '_agent.resolve', stranger, {
          tenant: stranger.tenant,
          agent_id: 'helper',
        }),
      );
      expect(foreign).toEqual(resolve);
    });

    it.each([
      ['tenant', { tenant: 'elsewhere' }],
      ['user', { user: 'mallory' }],
      ['session', { session: 's-9' }],
    ])('refuses a body %s other than the calling identity with scope_mismatch', async (_what, body) => {
      expect(await outcomeOf(effective(h.caller([]), 'default', body))).toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
    });

    it('lets an admin caller resolve a run of another tenant', async () => {
      const owner = h.caller([]);
      const admin = h.caller(['admin']);
      const result = await effective(admin, 'default', { tenant: owner.tenant, user: 'bob', session: 's-7' });
      expect(result.agent_id).toBe('default');
      await expect(
        h.service.rpc.call('agent-registry', '_agent.resolve', admin, { tenant: owner.tenant, agent_id: 'default' }),
      ).resolves.toMatchObject({ agent_id: 'default' });
    });

    it("refuses _agent.resolve of another tenant's agent to a caller without admin with scope_mismatch", async () => {
      const outcome = await outcomeOf(
        h.service.rpc.call('agent-registry', '_agent.resolve', h.caller([]), {
          tenant: 'elsewhere',
          agent_id: 'default',
        }),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it('refuses a malformed request with invalid_request', async () => {
      const who = h.caller([]);
      const outcome = await outcomeOf(
        h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
          tenant: who.tenant,
          agent_id: 'default',
        }),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('with governance answering tenant overrides', () => {
    it('applies each layer in order, each changing what a run receives', async () => {
      const admin = h.caller(['admin', 'agent_config:user']);
      const steps: Effective[] = [];

      const agent = await h.call<{ revision: { revision_id: string } }>(
        'agent_config.set_revision',
        {
          agent_id: 'helper',
          config: {
            prompt_layers: [{ name: 'base', text: 'You are Helper.' }],
            llm_params: { model: 'agent-model', temperature: 0.5 },
            mcp_connections: [{ server_id: 'gh', transport: 'sse', url: 'https://gh.example.com/sse' }],
          },
        },
        admin,
      );
      h.overrides.set(admin.tenant, {});
      steps.push(await effective(admin));
      expect(steps[0]?.config.llm_params).toEqual({ model: 'agent-model', temperature: 0.5 });
      expect(steps[0]?.layers[0]).toEqual({
        layer: 'agent',
        revision_id: agent.revision.revision_id,
        applied_keys: ['llm_params', 'mcp_connections', 'prompt_layers'],
      });
      expect(steps[0]?.layers[1]).toEqual({ layer: 'tenant_overrides', applied_keys: [] });

      h.overrides.set(admin.tenant, { model: 'tenant-model', extra_instructions: 'Follow tenant policy.' });
      steps.push(await effective(admin));
      expect(steps[1]?.config.llm_params).toEqual({ model: 'tenant-model', temperature: 0.5 });
      expect(steps[1]?.config.extra_system_blocks).toEqual([
        { name: 'tenant:extra_instructions', text: 'Follow tenant policy.' },
      ]);
      expect(steps[1]?.layers[1]).toEqual({
        layer: 'tenant_overrides',
        applied_keys: ['llm_params.model', 'extra_system_blocks'],
      });

      const variant = await h.call<{ revision: { revision_id: string } }>(
        'agent_config.user.set_revision',
        { agent_id: 'helper', config: { llm_params: { model: 'my-model', temperature: 0.9 } } },
        admin,
      );
      steps.push(await effective(admin));
      expect(steps[2]?.config.llm_params).toEqual({ model: 'my-model', temperature: 0.9 });
      expect(steps[2]?.variant_revision_id).toBe(variant.revision.revision_id);
      expect(steps[2]?.layers[2]).toEqual({
        layer: 'user_variant',
        revision_id: variant.revision.revision_id,
        applied_keys: ['llm_params.model', 'llm_params.temperature'],
      });

      await h.call('agent_config.session.set_user_prompt', { prompt: 'Answer in French.' }, admin);
      await h.call('agent_config.session.set_source_disables', { sources: ['gh'], agent_id: 'helper' }, admin);
      steps.push(await effective(admin));
      expect(steps[3]?.config.prompt_layers).toEqual([
        { name: 'base', text: 'You are Helper.' },
        { name: 'session:user_prompt', text: 'Answer in French.' },
      ]);
      expect(steps[3]?.config.mcp_connections).toEqual([]);
      expect(steps[3]?.source_disables).toEqual(['gh']);
      expect(steps[3]?.layers[3]).toEqual({
        layer: 'session',
        applied_keys: ['prompt_layers', 'source_disables', 'mcp_connections'],
      });

      await h.call('agent_config.skills.upsert', { skill: { name: 'cite', content: 'Tenant: cite.' } }, admin);
      await h.call(
        'agent_config.skills.upsert',
        { agent_id: 'helper', skill: { name: 'plan', content: 'Agent: plan.' } },
        admin,
      );
      await h.call('agent_config.user.skills.upsert', { skill: { name: 'cite', content: 'User: cite.' } }, admin);
      await h.call('agent_config.session.skills.upsert', { skill: { name: 'tone', content: 'Session: tone.' } }, admin);
      await h.call(
        'agent_config.session.skills.upsert',
        { skill: { name: 'idea', content: 'Maybe.' }, origin: 'proposed' },
        admin,
      );
      steps.push(await effective(admin));
      expect(steps[4]?.config.skills).toEqual(['cite', 'plan', 'tone']);
      expect(steps[4]?.skills.map((s) => [s.name, s.scope])).toEqual([
        ['cite', 'user'],
        ['plan', 'agent'],
        ['tone', 'session'],
      ]);
      expect(steps[4]?.config.extra_system_blocks?.map((b) => b.name)).toEqual([
        'tenant:extra_instructions',
        'skill:cite',
        'skill:plan',
        'skill:tone',
      ]);
      expect(steps[4]?.config.extra_system_blocks?.[1]?.text).toContain('User: cite.');
      expect(steps[4]?.layers.map((l) => l.layer)).toEqual([
        'agent',
        'tenant_overrides',
        'user_variant',
        'session',
        'skills',
      ]);

      expect(new Set(steps.map((s) => s.content_hash)).size).toBe(steps.length);
    });

    it("keeps another session's and another user's settings out", async () => {
      const admin = h.caller(['admin', 'agent_config:user']);
      h.overrides.set(admin.tenant, {});
      await h.call('agent_config.set_revision', { agent_id: 'helper', config: {} }, admin);
      await h.call(
        'agent_config.user.set_revision',
        { agent_id: 'helper', config: { llm_params: { temperature: 1 } } },
        admin,
      );
      await h.call('agent_config.session.set_user_prompt', { prompt: 'mine' }, admin);
      await h.call('agent_config.user.skills.upsert', { skill: { name: 'x', content: 'mine' } }, admin);
      const bob = { ...admin, user: 'bob', session: 's-2' };
      const seen = await effective(bob);
      expect(seen.config).toEqual({});
      expect(seen.layers.flatMap((l) => l.applied_keys)).toEqual([]);
    });

    it('reports its skill search in skill.search_executed, the query hashed and the skills used counted', async () => {
      const admin = h.caller(['admin']);
      await h.call('agent_config.set_revision', { agent_id: 'helper', config: {} }, admin);
      await h.call('agent_config.skills.upsert', { skill: { name: 'cite', content: 'Cite.' } }, admin);
      await h.call('agent_config.session.skills.upsert', { skill: { name: 'tone', content: 'Tone.' } }, admin);
      await effective(admin);
      await effective(admin);
      const frames = await h.events(admin.tenant, 'skill.search_executed');
      expect(frames).toHaveLength(2);
      expect(payloadKeys(frames[0])).toEqual(['Limit', 'Path', 'QueryHash', 'ResultN']);
      expect(frames[0]?.payload).toEqual({
        QueryHash: expect.stringMatching(/^sha256:/),
        Path: 'effective_config',
        Limit: 2_000,
        ResultN: 2,
      });
      expect(frames[1]?.payload.QueryHash).toBe(frames[0]?.payload.QueryHash);
      expect(JSON.stringify(frames.map((f) => f.payload))).not.toContain(admin.session);
    });

    it('limits tenant-library skills to the membership the agent names', async () => {
      const admin = h.caller(['admin']);
      h.overrides.set(admin.tenant, {});
      await h.call('agent_config.set_revision', { agent_id: 'helper', config: { skills: ['a'] } }, admin);
      await h.call('agent_config.skills.upsert', { skill: { name: 'a', content: 'A' } }, admin);
      await h.call('agent_config.skills.upsert', { skill: { name: 'b', content: 'B' } }, admin);
      expect((await effective(admin)).config.skills).toEqual(['a']);
    });

  });
});

describe('_agent.effective_config while governance does not answer the tenant overrides', () => {
  let h: Harness;
  let bus: Bus;

  beforeAll(async () => {
    h = await startHarness('effective-absent', { governance: false });
    bus = await connectBus({ servers: h.natsUrl, name: 'governance-stub' });
  });

  afterAll(async () => {
    await bus?.close();
    await h?.stop();
  });

  const effective = (who: VerifiedIdentity) =>
    h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      agent_id: 'default',
    }) as Promise<Effective>;

  /** Serves `_governance.effective_overrides` with `answer` until stopped. */
  const serveGovernance = (answer: (tenant: string) => unknown): Promise<ServedService> =>
    serveService(bus, {
      service: 'governance',
      version: '0.0.1',
      instanceId: `governance-stub-${randomUUID()}`,
      logger: createLogger({ name: 'governance-stub', level: 'silent' }),
      handlers: {
        '_governance.effective_overrides': async ({ body }) => answer((body as { tenant: string }).tenant),
      },
    });

  it('answers 503 unavailable, retryable, rather than a configuration without the tenant overrides', async () => {
    const failure = await effective(h.caller([])).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'unavailable', status: 503, retryable: true });
  });

  it('answers 503 unavailable when governance does not serve the tenant overrides (unimplemented)', async () => {
    const governance = await serveGovernance(() => {
      throw new ServiceError('unimplemented', 'not here');
    });
    try {
      expect(await outcomeOf(effective(h.caller([])))).toMatchObject({ ok: false, code: 'unavailable' });
    } finally {
      await governance.stop();
    }
  });

  it('resolves with the overrides once governance answers within the call (its subscription back after a failover)', async () => {
    const who = h.caller([]);
    let governance: Promise<ServedService> | undefined;
    const back = setTimeout(
      () => (governance = serveGovernance((tenant) => ({ tenant, overrides: { model: 'tenant-model' } }))),
      200,
    );
    try {
      const result = await effective(who);
      expect(result.config.llm_params).toEqual({ model: 'tenant-model' });
      expect(result.layers[1]).toEqual({ layer: 'tenant_overrides', applied_keys: ['llm_params.model'] });
    } finally {
      clearTimeout(back);
      await (await governance)?.stop();
    }
  });
});

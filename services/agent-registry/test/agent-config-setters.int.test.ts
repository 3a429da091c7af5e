import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { contentHash } from '@ars/service-kit';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Revision {
  agent_id: string;
  revision_id: string;
  parent_revision_id?: string;
  content_hash: string;
  author: { tenant: string; user: string; session: string; run: string };
  config: Record<string, unknown>;
}

const REVISED_KEYS = ['AgentID', 'Author', 'ContentHash', 'OccurredAt', 'ParentRevisionID', 'RevisionID'];

describe('agent_config setters', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('setters');
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function set(method: string, admin: VerifiedIdentity, body: Record<string, unknown>): Promise<Revision> {
    return (await h.call<{ revision: Revision }>(method, { agent_id: 'helper', ...body }, admin)).revision;
  }

  const authorOf = (c: VerifiedIdentity) => ({ tenant: c.tenant, user: c.user, session: c.session, run: '' });

  describe.each([
    [
      'agent_config.set_prompt_layers',
      { layers: [{ name: 'base', text: 'Be brief.' }] },
      'prompt_layers',
      [{ name: 'base', text: 'Be brief.' }],
    ],
    [
      'agent_config.set_extra_system_blocks',
      { blocks: [{ text: 'Cite sources.' }] },
      'extra_system_blocks',
      [{ text: 'Cite sources.' }],
    ],
    [
      'agent_config.set_llm_params',
      { params: { model: 'm', temperature: 0.3 } },
      'llm_params',
      { model: 'm', temperature: 0.3 },
    ],
    [
      'agent_config.set_tool_exposure',
      { exposure: { mode: 'deny_list', tools: ['shell'] } },
      'tool_exposure',
      { mode: 'deny_list', tools: ['shell'] },
    ],
    [
      'agent_config.set_llm_provider',
      { provider: { provider_name: 'local', provider: 'openai', base_url: 'http://127.0.0.1:11434/v1' } },
      'llm_provider',
      { provider_name: 'local', provider: 'openai', base_url: 'http://127.0.0.1:11434/v1' },
    ],
  ] as const)('%s', (method, body, member, value) => {
    it('writes a new head revision on the previous one with only its member changed', async () => {
      const admin = h.caller();
      const first = await set('agent_config.set_revision', admin, { config: { naming_policy: { mode: 'off' } } });
      const next = await set(method, admin, body);
      expect(next.parent_revision_id).toBe(first.revision_id);
      expect(next.config).toEqual({ naming_policy: { mode: 'off' }, [member]: value });
      expect(next.content_hash).toBe(contentHash(next.config));
      expect(next.author).toEqual(authorOf(admin));
      const head = await h.call<{ revision: Revision }>('agent_config.get', { agent_id: 'helper' }, admin);
      expect(head.revision.revision_id).toBe(next.revision_id);
    });

    it('publishes agent.config.revised for the new revision', async () => {
      const admin = h.caller();
      const next = await set(method, admin, body);
      const [frame] = await h.events(admin.tenant, 'agent.config.revised');
      expect(payloadKeys(frame)).toEqual(REVISED_KEYS);
      expect(frame?.payload).toMatchObject({
        RevisionID: next.revision_id,
        AgentID: 'helper',
        ContentHash: next.content_hash,
      });
    });

    it('refuses a stale parent_revision_id with conflict', async () => {
      const admin = h.caller();
      const first = await set(method, admin, body);
      await set(method, admin, body);
      expect(
        await h.outcome(method, { agent_id: 'helper', ...body, parent_revision_id: first.revision_id }, admin),
      ).toMatchObject({
        ok: false,
        code: 'conflict',
      });
    });
  });

  it('starts an agent without a revision from nothing, and the default agent from its built-in configuration', async () => {
    const admin = h.caller();
    const fresh = await set('agent_config.set_llm_params', admin, { params: { temperature: 1 } });
    expect(fresh.config).toEqual({ llm_params: { temperature: 1 } });
    expect(fresh.parent_revision_id).toBeUndefined();
    const house = await set('agent_config.set_llm_params', admin, { agent_id: 'default', params: { temperature: 1 } });
    expect(house.config).toEqual({
      llm_provider: { provider_name: 'scripted', provider: 'scripted' },
      llm_params: { temperature: 1 },
    });
  });

  it('accepts a parent_revision_id equal to the head', async () => {
    const admin = h.caller();
    const first = await set('agent_config.set_llm_params', admin, { params: {} });
    const second = await set('agent_config.set_llm_params', admin, {
      params: { top_p: 0.5 },
      parent_revision_id: first.revision_id,
    });
    expect(second.parent_revision_id).toBe(first.revision_id);
  });

  it('keeps every edit when setters race without a parent_revision_id', async () => {
    const admin = h.caller();
    await Promise.all([
      set('agent_config.set_prompt_layers', admin, { layers: [{ name: 'a', text: 'A' }] }),
      set('agent_config.set_llm_params', admin, { params: { temperature: 0 } }),
      set('agent_config.set_tool_exposure', admin, { exposure: { mode: 'all' } }),
      set('agent_config.set_extra_system_blocks', admin, { blocks: [{ text: 'B' }] }),
    ]);
    const head = await h.call<{ revision: Revision }>('agent_config.get', { agent_id: 'helper' }, admin);
    expect(Object.keys(head.revision.config).sort()).toEqual([
      'extra_system_blocks',
      'llm_params',
      'prompt_layers',
      'tool_exposure',
    ]);
  });

  it('publishes agent_config.llm_provider.installed with the spec keys', async () => {
    const admin = h.caller();
    await set('agent_config.set_llm_provider', admin, {
      provider: {
        provider_name: 'local',
        provider: 'openai',
        inference_broker: 'broker-1',
        base_url: 'http://127.0.0.1:1/v1',
      },
    });
    const [frame] = await h.events(admin.tenant, 'agent_config.llm_provider.installed');
    expect(payloadKeys(frame)).toEqual([
      'AgentID',
      'Author',
      'InferenceBroker',
      'OccurredAt',
      'Provider',
      'ProviderName',
    ]);
    expect(frame?.payload).toMatchObject({
      Author: authorOf(admin),
      AgentID: 'helper',
      ProviderName: 'local',
      Provider: 'openai',
      InferenceBroker: 'broker-1',
    });
  });

  describe('secrets', () => {
    it('refuses an API key member: the schema has none (keys live in governance)', async () => {
      const outcome = await h.outcome(
        'agent_config.set_llm_provider',
        {
          agent_id: 'helper',
          provider: { provider_name: 'p', provider: 'openai', api_key: 'sk-abcdefghijklmnopqrstuvwx' },
        },
        h.caller(),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(outcome.ok ? '' : outcome.message).not.toContain('sk-abc');
    });

    it.each([
      [
        'agent_config.set_llm_provider',
        {
          provider: {
            provider_name: 'p',
            provider: 'openai',
            base_url: 'https://me:hunter2hunter2@llm.example.com/v1',
          },
        },
      ],
      [
        'agent_config.add_mcp_connection',
        { connection: { server_id: 's', transport: 'sse', url: 'https://m.example.com/sse?access_token=opensesame' } },
      ],
      [
        'agent_config.add_mcp_connection',
        { connection: { server_id: 's', transport: 'stdio', command: 'mcp', args: ['--api-key', 'opensesame'] } },
      ],
      [
        'agent_config.set_oauth_provider',
        {
          provider: {
            provider_name: 'p',
            credential_broker: 'b',
            token_url: 'https://x.example.com/t?client_secret=opensesame',
          },
        },
      ],
      [
        'agent_config.set_revision',
        {
          config: {
            mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'ghp_abcdefghijklmnopqrstuvwxyz' }],
          },
        },
      ],
    ] as const)('%s refuses a credential in clear without echoing it', async (method, body) => {
      const admin = h.caller();
      const outcome = await h.outcome(method, { agent_id: 'helper', ...body }, admin);
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
      const message = outcome.ok ? '' : outcome.message;
      expect(message).toMatch(/credential/);
      expect(message).not.toMatch(/opensesame|hunter2|ghp_/);
      expect(await h.outcome('agent_config.get', { agent_id: 'helper' }, admin)).toMatchObject({
        ok: false,
        code: 'not_found',
      });
    });
  });

  describe('bad inputs', () => {
    it.each([
      ['agent_config.set_prompt_layers', { layers: [{ name: '', text: 'x' }] }],
      ['agent_config.set_llm_params', { params: { temperature: 'hot' } }],
      ['agent_config.set_llm_provider', { provider: { provider_name: 'p', provider: 'other' } }],
      ['agent_config.set_tool_exposure', { exposure: { mode: 'some' } }],
      ['agent_config.set_extra_system_blocks', { blocks: 'text' }],
      ['agent_config.set_oauth_provider', { provider: { provider_name: 'p' } }],
      ['agent_config.set_mcp_discovery_origins', { origins: 'https://a.example.com' }],
      ['agent_config.set_prompt_layers', { layers: [], agent_id: '' }],
    ])('%s refuses %o with invalid_request', async (method, body) => {
      expect(await h.outcome(method, { agent_id: 'helper', ...body }, h.caller())).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });

  it("never writes into another tenant's agent", async () => {
    const owner = h.caller();
    await set('agent_config.set_llm_params', owner, { params: { temperature: 0 } });
    const stranger = h.caller();
    const theirs = await set('agent_config.set_llm_params', stranger, { params: { temperature: 1 } });
    expect(theirs.parent_revision_id).toBeUndefined();
    const mine = await h.call<{ revision: Revision }>('agent_config.get', { agent_id: 'helper' }, owner);
    expect(mine.revision.config).toEqual({ llm_params: { temperature: 0 } });
  });
});

import { describe, expect, it } from 'vitest';
import type { AgentConfigContent } from '@ars/contracts';
import {
  LAYERS,
  SESSION_PROMPT_LAYER,
  TENANT_INSTRUCTIONS_BLOCK,
  intersectExposure,
  resolveEffectiveConfig,
} from '../../src/domain/effective-config.ts';
import type { EffectiveInputs } from '../../src/domain/effective-config.ts';
import { checkVariantMembers } from '../../src/domain/user-variant.ts';

const AGENT: AgentConfigContent = {
  prompt_layers: [{ name: 'base', text: 'Agent prompt.' }],
  extra_system_blocks: [{ name: 'agent', text: 'Agent block.' }],
  llm_params: { model: 'agent-model', temperature: 0.5, max_tokens: 100 },
  tool_exposure: { mode: 'deny_list', tools: ['shell'] },
  mcp_connections: [
    { server_id: 'gh', transport: 'sse', url: 'https://gh.example.com/sse' },
    { server_id: 'fs', transport: 'stdio', command: 'mcp-fs' },
  ],
};

function inputs(overrides: Partial<EffectiveInputs> = {}): EffectiveInputs {
  return {
    agentId: 'helper',
    agent: { revision_id: 'r-agent', config: AGENT },
    tenant: {},
    variant: null,
    session: {},
    skills: [],
    ...overrides,
  };
}

describe('resolveEffectiveConfig', () => {
  it('lists every layer in the documented order, even those that applied nothing', () => {
    const result = resolveEffectiveConfig(inputs());
    expect(result.layers.map((l) => l.layer)).toEqual([...LAYERS]);
    expect(result.layers[0]).toEqual({
      layer: 'agent',
      revision_id: 'r-agent',
      applied_keys: ['extra_system_blocks', 'llm_params', 'mcp_connections', 'prompt_layers', 'tool_exposure'],
    });
    expect(result.config).toEqual(AGENT);
    expect(result.source_disables).toEqual([]);
    expect(result.content_hash).toMatch(/^sha256:/);
  });

  it('applies tenant overrides over the agent and the user variant over both', () => {
    const result = resolveEffectiveConfig(
      inputs({
        tenant: { model: 'tenant-model', temperature: 0.1, extra_instructions: 'Tenant rule.' },
        variant: { revision_id: 'r-variant', config: { llm_params: { temperature: 0.9 } } },
      }),
    );
    expect(result.config.llm_params).toEqual({ model: 'tenant-model', temperature: 0.9, max_tokens: 100 });
    expect(result.layers[1]).toEqual({
      layer: 'tenant_overrides',
      applied_keys: ['llm_params.model', 'llm_params.temperature', 'extra_system_blocks'],
    });
    expect(result.layers[2]).toEqual({
      layer: 'user_variant',
      revision_id: 'r-variant',
      applied_keys: ['llm_params.temperature'],
    });
    expect(result.variant_revision_id).toBe('r-variant');
    expect(result.config.extra_system_blocks?.map((b) => b.name)).toEqual(['agent', TENANT_INSTRUCTIONS_BLOCK]);
  });

  it("keeps the tenant's instructions when a variant replaces the extra blocks", () => {
    const result = resolveEffectiveConfig(
      inputs({
        tenant: { extra_instructions: 'Tenant rule.' },
        variant: {
          revision_id: 'v',
          config: { extra_system_blocks: [{ name: 'mine', text: 'Mine.' }], prompt_layers: [] },
        },
      }),
    );
    expect(result.config.extra_system_blocks).toEqual([
      { name: 'mine', text: 'Mine.' },
      { name: TENANT_INSTRUCTIONS_BLOCK, text: 'Tenant rule.' },
    ]);
    expect(result.config.prompt_layers).toEqual([]);
  });

  it('lets a variant only narrow the tool exposure', () => {
    const result = resolveEffectiveConfig(
      inputs({ variant: { revision_id: 'v', config: { tool_exposure: { mode: 'all', tools: [] } } } }),
    );
    expect(result.config.tool_exposure).toEqual({ mode: 'deny_list', tools: ['shell'] });
  });

  it('appends the session prompt as the last prompt layer and drops disabled MCP sources', () => {
    const result = resolveEffectiveConfig(
      inputs({ session: { user_prompt: 'Answer in French.', source_disables: ['gh', 'builtin'] } }),
    );
    expect(result.config.prompt_layers?.at(-1)).toEqual({ name: SESSION_PROMPT_LAYER, text: 'Answer in French.' });
    expect(result.config.mcp_connections?.map((c) => c.server_id)).toEqual(['fs']);
    expect(result.source_disables).toEqual(['gh', 'builtin']);
    expect(result.layers[3]).toEqual({
      layer: 'session',
      applied_keys: ['prompt_layers', 'source_disables', 'mcp_connections'],
    });
  });

  it('adds the winning skills as extra system blocks after every other block, and names them in skills', () => {
    const result = resolveEffectiveConfig(
      inputs({
        tenant: { extra_instructions: 'Tenant rule.' },
        skills: [
          {
            name: 'cite',
            scope: 'tenant',
            origin: 'manual',
            content_hash: 'h1',
            content: 'Tenant cite.',
            triggers: [],
          },
          {
            name: 'cite',
            scope: 'session',
            origin: 'manual',
            content_hash: 'h2',
            content: 'Session cite.',
            triggers: ['sources'],
            description: 'Cite.',
          },
        ],
      }),
    );
    expect(result.config.skills).toEqual(['cite']);
    expect(result.skills).toEqual([{ name: 'cite', scope: 'session', origin: 'manual', content_hash: 'h2' }]);
    expect(result.config.extra_system_blocks?.map((b) => b.name)).toEqual([
      'agent',
      TENANT_INSTRUCTIONS_BLOCK,
      'skill:cite',
    ]);
    expect(result.config.extra_system_blocks?.at(-1)?.text).toBe(
      'Skill: cite\nCite.\nUse when: sources\n\nSession cite.',
    );
    expect(result.layers[4]).toEqual({ layer: 'skills', applied_keys: ['skills', 'extra_system_blocks'] });
  });

  it('changes the content hash when any layer changes the result', () => {
    const plain = resolveEffectiveConfig(inputs()).content_hash;
    expect(resolveEffectiveConfig(inputs({ session: { user_prompt: 'x' } })).content_hash).not.toBe(plain);
    expect(resolveEffectiveConfig(inputs()).content_hash).toBe(plain);
  });
});

describe('intersectExposure', () => {
  it.each([
    [undefined, { mode: 'allow_list', tools: ['a'] }, { mode: 'allow_list', tools: ['a'] }],
    [
      { mode: 'all', tools: [] },
      { mode: 'deny_list', tools: ['a'] },
      { mode: 'deny_list', tools: ['a'] },
    ],
    [
      { mode: 'allow_list', tools: ['a', 'b'] },
      { mode: 'allow_list', tools: ['b', 'c'] },
      { mode: 'allow_list', tools: ['b'] },
    ],
    [
      { mode: 'deny_list', tools: ['a'] },
      { mode: 'deny_list', tools: ['b', 'a'] },
      { mode: 'deny_list', tools: ['a', 'b'] },
    ],
    [
      { mode: 'allow_list', tools: ['a', 'b'] },
      { mode: 'deny_list', tools: ['a'] },
      { mode: 'allow_list', tools: ['b'] },
    ],
    [
      { mode: 'deny_list', tools: ['a'] },
      { mode: 'allow_list', tools: ['a', 'b'] },
      { mode: 'allow_list', tools: ['b'] },
    ],
  ] as const)('%o ∩ %o = %o', (a, b, expected) => {
    expect(intersectExposure(a as never, b as never)).toEqual(expected);
  });
});

describe('checkVariantMembers', () => {
  it('accepts prompt, parameter and preference members', () => {
    expect(() =>
      checkVariantMembers({ prompt_layers: [], llm_params: { temperature: 1 }, skills: ['a'] }),
    ).not.toThrow();
  });

  it.each(['llm_provider', 'mcp_connections', 'oauth_providers', 'completion_hook'])('refuses %s', (member) => {
    expect(() => checkVariantMembers({ [member]: {} } as AgentConfigContent)).toThrowError(
      expect.objectContaining({ code: 'invalid_request', message: expect.stringContaining(`config.${member}`) }),
    );
  });
});

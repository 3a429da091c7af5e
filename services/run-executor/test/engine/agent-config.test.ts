import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import {
  AgentConfigRefused,
  DEFAULT_SYSTEM_PROMPT,
  createAgentConfigResolver,
  parseEffectiveReply,
  toAgentRunConfig,
} from '../../src/engine/agent-config.ts';

const record = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  agent_id: 'a',
  revision_id: 'r1',
  config,
  source_disables: [],
  ...extra,
});

describe('agent configuration of a run', () => {
  it('falls back to the built-in default prompt and the scripted provider for an empty configuration', () => {
    expect(toAgentRunConfig(record({}))).toMatchObject({
      agentId: 'a',
      system: DEFAULT_SYSTEM_PROMPT,
      provider: { kind: 'scripted' },
    });
  });

  it('joins prompt layers then extra system blocks, and reads the provider, parameters and multimodal default', () => {
    const config = toAgentRunConfig(
      record(
        {
          prompt_layers: [{ name: 'one', text: 'First.' }],
          extra_system_blocks: [{ text: 'Last.' }],
          llm_provider: { provider_name: 'p', provider: 'openai', base_url: 'http://x/v1', model: 'm' },
          llm_params: { temperature: 0.2, reasoning_effort: 'low' },
          tool_exposure: { mode: 'allow_list', tools: ['echo'] },
          multimodal: { default_disposition: 'inline' },
        },
        { source_disables: ['builtin'] },
      ),
    );
    expect(config).toMatchObject({
      revisionId: 'r1',
      system: 'First.\n\nLast.',
      provider: { kind: 'openai', name: 'p', baseUrl: 'http://x/v1', model: 'm' },
      params: { temperature: 0.2, reasoning_effort: 'low' },
      toolExposure: { mode: 'allow_list', tools: ['echo'] },
      sourceDisables: ['builtin'],
      defaultDisposition: 'inline',
    });
  });

  it("reads the server ids of the agent's MCP connections (none when it has none)", () => {
    const connections = [
      { server_id: 'fs', transport: 'stdio', command: 'mcp-fs' },
      { server_id: 'web', transport: 'streamable_http', url: 'http://127.0.0.1:1/mcp' },
    ];
    expect(toAgentRunConfig(record({ mcp_connections: connections })).mcpServers).toEqual(['fs', 'web']);
    expect(toAgentRunConfig(record({})).mcpServers).toEqual([]);
  });

  it('reads an _agent.effective_config answer whose agent layer is the built-in default (revision_id null)', () => {
    const parsed = parseEffectiveReply({
      agent_id: 'default',
      revision_id: null,
      config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
      source_disables: [],
      skills: [],
      layers: [
        { layer: 'agent', revision_id: null, applied_keys: ['llm_provider'] },
        { layer: 'tenant_overrides', applied_keys: [] },
      ],
      content_hash: 'sha256:abc',
      added_later: true,
    });
    expect(parsed).toMatchObject({
      agent_id: 'default',
      revision_id: null,
      content_hash: 'sha256:abc',
      source: 'agent-registry',
      layers: [
        { layer: 'agent', revision_id: null, applied_keys: ['llm_provider'] },
        { layer: 'tenant_overrides', applied_keys: [] },
      ],
    });
  });
});

describe('resolving a run’s configuration', () => {
  const owner = { tenant: 't', user: 'u', session: 's', scopes: [] };
  const logger = createLogger({ name: 'test', level: 'silent' });
  const failing = (error: Error): RpcClient => ({
    async call() {
      throw error;
    },
  });

  it('fails closed for the default agent too while agent-registry does not answer: no built-in configuration runs', async () => {
    const resolver = createAgentConfigResolver({
      rpc: failing(new ServiceError('unavailable', 'service agent-registry is not available')),
      logger,
      cacheMs: 0,
    });
    await expect(resolver.resolve(owner, 'default')).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('turns a refusal of the agent into AgentConfigRefused', async () => {
    const resolver = createAgentConfigResolver({
      rpc: failing(new ServiceError('not_found', 'no such agent')),
      logger,
      cacheMs: 0,
    });
    await expect(resolver.resolve(owner, 'ghost')).rejects.toBeInstanceOf(AgentConfigRefused);
  });
});

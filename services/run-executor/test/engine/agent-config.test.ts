import { describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_PROMPT, toAgentRunConfig } from '../../src/engine/agent-config.ts';

describe('agent configuration of a run', () => {
  it('falls back to the built-in default for an empty configuration', () => {
    expect(toAgentRunConfig({ agent_id: 'default', config: {} })).toMatchObject({
      agentId: 'default',
      system: DEFAULT_SYSTEM_PROMPT,
      provider: { kind: 'scripted' },
    });
  });

  it('joins prompt layers then extra system blocks, and reads the provider and parameters', () => {
    const config = toAgentRunConfig({
      agent_id: 'a',
      revision_id: 'r1',
      config: {
        prompt_layers: [{ name: 'one', text: 'First.' }],
        extra_system_blocks: [{ text: 'Last.' }],
        llm_provider: { provider_name: 'p', provider: 'openai', base_url: 'http://x/v1', model: 'm' },
        llm_params: { temperature: 0.2 },
        tool_exposure: { mode: 'allow_list', tools: ['echo'] },
      },
    });
    expect(config).toMatchObject({
      revisionId: 'r1',
      system: 'First.\n\nLast.',
      provider: { kind: 'openai', baseUrl: 'http://x/v1', model: 'm' },
      params: { temperature: 0.2 },
      toolExposure: { mode: 'allow_list', tools: ['echo'] },
    });
  });
});

import { describe, expect, it } from 'vitest';
import { contentHash } from '@ars/service-kit';
import type { EffectiveConfigRecord } from '../../src/engine/agent-config.ts';
import { applyRunOverrides, patchRunOverrides, splitRunOverrides } from '../../src/engine/run-overrides.ts';

const resolved: EffectiveConfigRecord = {
  agent_id: 'a',
  revision_id: 'r1',
  config: {
    prompt_layers: [
      { name: 'base', text: 'Agent prompt.' },
      { name: 'session:user_prompt', text: 'Session prompt.' },
    ],
    extra_system_blocks: [{ name: 'tenant:extra_instructions', text: 'Tenant.' }],
    llm_params: { temperature: 0.1, top_p: 0.5 },
  },
  source_disables: [],
  skills: [],
  layers: [{ layer: 'agent', revision_id: 'r1', applied_keys: ['prompt_layers'] }],
  content_hash: 'sha256:registry',
  source: 'agent-registry',
  resolved_at: '2025-01-01T00:00:00.000Z',
};

describe('run overrides', () => {
  it('splits a write into members to set, members to clear and the members it named', () => {
    const patch = splitRunOverrides({ temperature: 0.7, model: null, system_prompt: 'x' });
    expect(patch.set).toEqual({ temperature: 0.7, system_prompt: 'x' });
    expect(patch.clear).toEqual(['model']);
    expect([...patch.touched].sort()).toEqual(['model', 'system_prompt', 'temperature']);
    expect(patchRunOverrides({ model: 'm', max_tokens: 5 }, patch)).toEqual({
      max_tokens: 5,
      temperature: 0.7,
      system_prompt: 'x',
    });
  });

  it('records an empty run_overrides layer and keeps the registry hash when none are set', () => {
    const applied = applyRunOverrides(resolved, {});
    expect(applied.content_hash).toBe('sha256:registry');
    expect(applied.layers.at(-1)).toEqual({ layer: 'run_overrides', applied_keys: [] });
  });

  it('replaces LLM parameters, the prompt layers (keeping the session prompt) and appends extra instructions', () => {
    const applied = applyRunOverrides(resolved, {
      temperature: 0.9,
      model: 'gpt-x',
      max_tokens: 77,
      reasoning_effort: 'high',
      system_prompt: 'Run prompt.',
      extra_instructions: 'Run extra.',
    });
    expect(applied.config).toEqual({
      prompt_layers: [
        { name: 'run:system_prompt', text: 'Run prompt.' },
        { name: 'session:user_prompt', text: 'Session prompt.' },
      ],
      extra_system_blocks: [
        { name: 'tenant:extra_instructions', text: 'Tenant.' },
        { name: 'run:extra_instructions', text: 'Run extra.' },
      ],
      llm_params: { temperature: 0.9, top_p: 0.5, model: 'gpt-x', max_tokens: 77, reasoning_effort: 'high' },
    });
    expect(applied.layers.at(-1)).toEqual({
      layer: 'run_overrides',
      applied_keys: [
        'llm_params.model',
        'llm_params.temperature',
        'llm_params.max_tokens',
        'llm_params.reasoning_effort',
        'prompt_layers',
        'extra_system_blocks',
      ],
    });
    expect(applied.content_hash).toBe(contentHash({ config: applied.config, source_disables: [] }));
    expect(applied.content_hash).not.toBe('sha256:registry');
  });
});

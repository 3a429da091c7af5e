import { describe, expect, it } from 'vitest';
import { applyPatches, decidePatch, PATCH_REJECTIONS } from '../../src/engine/run-patches.ts';
import type { EffectiveConfigRecord } from '../../src/engine/agent-config.ts';

const record = (config: Record<string, unknown>): EffectiveConfigRecord =>
  ({
    agent_id: 'a',
    revision_id: 'r',
    config,
    source_disables: [],
    skills: [],
    layers: [],
    content_hash: 'h',
    source: 'builtin',
    resolved_at: '2026-01-01T00:00:00.000Z',
  }) as unknown as EffectiveConfigRecord;

describe('decidePatch', () => {
  it('finds nothing to do when the overrides are the same', () => {
    expect(decidePatch({ temperature: 0.1 }, { temperature: 0.1 })).toEqual({ kind: 'none' });
  });

  it('applies only the members that changed', () => {
    expect(decidePatch({ temperature: 0.1, max_tokens: 5 }, { temperature: 0.1, max_tokens: 9 })).toEqual({
      kind: 'apply',
      members: { max_tokens: 9 },
    });
  });

  it('lets a model change through to the governance check, with what else changed', () => {
    expect(decidePatch({}, { model: 'm', temperature: 0.3 })).toEqual({
      kind: 'apply',
      members: { temperature: 0.3, model: 'm' },
    });
  });

  it('refuses clearing the model without asking anyone', () => {
    expect(decidePatch({ model: 'm' }, {})).toMatchObject({ kind: 'reject', reason: PATCH_REJECTIONS.cleared });
  });

  it('refuses a patch that clears a member', () => {
    expect(decidePatch({ temperature: 0.1 }, {})).toMatchObject({ kind: 'reject', reason: PATCH_REJECTIONS.cleared });
  });
});

describe('applyPatches', () => {
  it('replaces the run instructions block instead of adding a second one', () => {
    const base = record({
      extra_system_blocks: [
        { name: 'tenant', text: 'T' },
        { name: 'run:extra_instructions', text: 'OLD' },
      ],
    });
    const patched = applyPatches(base, { extra_instructions: 'NEW' });
    expect(patched.config.extra_system_blocks).toEqual([
      { name: 'tenant', text: 'T' },
      { name: 'run:extra_instructions', text: 'NEW' },
    ]);
  });

  it('replaces the llm parameters it names and keeps the others', () => {
    const patched = applyPatches(record({ llm_params: { model: 'm', temperature: 0.1 } }), { temperature: 0.9 });
    expect(patched.config.llm_params).toEqual({ model: 'm', temperature: 0.9 });
  });
});

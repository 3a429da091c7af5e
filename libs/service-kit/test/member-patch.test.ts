import { describe, expect, it } from 'vitest';
import { applyPatch, splitPatch } from '../src/index.ts';

interface Write {
  model?: string | null;
  temperature?: number | null;
  max_tokens?: number | null;
  ignored?: string;
}

const MEMBERS = ['model', 'temperature', 'max_tokens'] as const;

describe('member patches', () => {
  it('split a write into members to set and to clear, leaving absent members and non-members out', () => {
    const patch = splitPatch<Write, (typeof MEMBERS)[number]>({ model: 'm', temperature: null, ignored: 'x' }, MEMBERS);
    expect(patch.set).toEqual({ model: 'm' });
    expect(patch.clear).toEqual(['temperature']);
    expect([...patch.touched]).toEqual(['model', 'temperature']);
  });

  it('apply by replacing set members and removing cleared ones, keeping the rest as stored', () => {
    const patch = splitPatch<Write, (typeof MEMBERS)[number]>({ model: 'gpt', temperature: null }, MEMBERS);
    expect(applyPatch({ temperature: 0.3, max_tokens: 5 }, patch)).toEqual({ model: 'gpt', max_tokens: 5 });
  });

  it('keep falsy values as values: 0 and empty strings set a member', () => {
    const patch = splitPatch<Write, (typeof MEMBERS)[number]>({ model: '', max_tokens: 0 }, MEMBERS);
    expect(applyPatch({}, patch)).toEqual({ model: '', max_tokens: 0 });
    expect(patch.clear).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { diffConfigs, pointerToken } from '../../src/domain/config-diff.ts';
import { applyChanges } from '../helpers/apply-changes.ts';

describe('diffConfigs', () => {
  it('finds nothing between configurations that differ only in key order', () => {
    expect(
      diffConfigs({ llm_params: { model: 'm', temperature: 0 } }, { llm_params: { temperature: 0, model: 'm' } }),
    ).toEqual([]);
  });

  it('names added, removed and replaced members by JSON Pointer with before and after', () => {
    const before = { llm_params: { model: 'a', temperature: 0.1 }, skills: ['x'] };
    const after = { llm_params: { model: 'b', max_tokens: 10 }, naming_policy: { mode: 'off' } };
    expect(diffConfigs(before, after)).toEqual([
      { path: '/llm_params/max_tokens', op: 'add', after: 10 },
      { path: '/llm_params/model', op: 'replace', before: 'a', after: 'b' },
      { path: '/llm_params/temperature', op: 'remove', before: 0.1 },
      { path: '/naming_policy', op: 'add', after: { mode: 'off' } },
      { path: '/skills', op: 'remove', before: ['x'] },
    ]);
  });

  it('compares arrays by position, adding a longer tail and removing a shorter one from the end', () => {
    expect(diffConfigs({ skills: ['a', 'b'] }, { skills: ['a', 'c', 'd'] })).toEqual([
      { path: '/skills/1', op: 'replace', before: 'b', after: 'c' },
      { path: '/skills/2', op: 'add', after: 'd' },
    ]);
    expect(diffConfigs({ skills: ['a', 'b', 'c'] }, { skills: ['a'] })).toEqual([
      { path: '/skills/2', op: 'remove', before: 'c' },
      { path: '/skills/1', op: 'remove', before: 'b' },
    ]);
  });

  it('descends into array members that are objects', () => {
    const before = { prompt_layers: [{ name: 'base', text: 'Be brief.' }] };
    const after = { prompt_layers: [{ name: 'base', text: 'Be thorough.' }] };
    expect(diffConfigs(before, after)).toEqual([
      { path: '/prompt_layers/0/text', op: 'replace', before: 'Be brief.', after: 'Be thorough.' },
    ]);
  });

  it('replaces a member whose type changed whole', () => {
    expect(diffConfigs({ a: [1] }, { a: { b: 1 } })).toEqual([
      { path: '/a', op: 'replace', before: [1], after: { b: 1 } },
    ]);
  });

  it('escapes ~ and / in member names', () => {
    expect(pointerToken('a/b~c')).toBe('a~1b~0c');
    expect(diffConfigs({}, { 'a/b': 1 })).toEqual([{ path: '/a~1b', op: 'add', after: 1 }]);
  });

  it('yields changes that turn the first configuration into the second', () => {
    const before = {
      prompt_layers: [
        { name: 'a', text: '1' },
        { name: 'b', text: '2' },
        { name: 'c', text: '3' },
      ],
      llm_params: { model: 'm', stop: ['x', 'y'] },
      tool_exposure: { mode: 'deny_list', tools: ['rm'] },
    };
    const after = {
      prompt_layers: [{ name: 'a', text: 'one' }],
      llm_params: { model: 'n', stop: ['x', 'y', 'z'], temperature: 1 },
      mcp_connections: [{ server_id: 's', transport: 'sse', url: 'https://m.example.com/sse' }],
    };
    expect(applyChanges(before, diffConfigs(before, after))).toEqual(after);
    expect(applyChanges(after, diffConfigs(after, before))).toEqual(before);
  });
});

import { describe, expect, it } from 'vitest';
import { canonicalJson, diffJson, diffLines, hunks, isUnchanged } from '../src/config-diff.ts';

const ops = (oldText: string, newText: string) =>
  diffLines(oldText, newText).map((line) => `${line.op === 'keep' ? ' ' : line.op === 'add' ? '+' : '-'}${line.text}`);

describe('canonical JSON', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe(
      '{\n  "a": {\n    "c": null,\n    "d": [\n      2,\n      1\n    ]\n  },\n  "b": 1\n}',
    );
  });

  it('prints undefined as an empty document', () => {
    expect(canonicalJson(undefined)).toBe('');
  });
});

describe('line diff', () => {
  it('keeps every line of identical texts', () => {
    const lines = diffLines('a\nb', 'a\nb');
    expect(isUnchanged(lines)).toBe(true);
    expect(lines.map((l) => [l.oldLine, l.newLine])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('shows a replaced line as removed then added, between kept lines', () => {
    expect(ops('a\nb\nc', 'a\nx\nc')).toEqual([' a', '-b', '+x', ' c']);
  });

  it('aligns insertions and deletions in the middle by the longest common subsequence', () => {
    expect(ops('a\nb\nc\nd\ne', 'a\nc\nd\nf\ne')).toEqual([' a', '-b', ' c', ' d', '+f', ' e']);
  });

  it('numbers lines in the old and the new text', () => {
    const lines = diffLines('a\nb', 'z\na\nb');
    expect(lines).toEqual([
      { op: 'add', text: 'z', newLine: 1 },
      { op: 'keep', text: 'a', oldLine: 1, newLine: 2 },
      { op: 'keep', text: 'b', oldLine: 2, newLine: 3 },
    ]);
  });

  it('diffs from and to an empty document', () => {
    expect(ops('', 'a\nb')).toEqual(['+a', '+b']);
    expect(ops('a', '')).toEqual(['-a']);
  });

  it('ignores key order: only the changed member differs', () => {
    const lines = diffJson(
      { llm_params: { temperature: 0.2, model: 'm' } },
      { llm_params: { model: 'm', temperature: 0.7 } },
    );
    expect(lines.filter((l) => l.op !== 'keep').map((l) => `${l.op} ${l.text.trim()}`)).toEqual([
      'remove "temperature": 0.2',
      'add "temperature": 0.7',
    ]);
  });
});

describe('hunks', () => {
  it('keeps context around changes and counts the unchanged lines left out', () => {
    const old = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const changed = old.map((line, i) => (i === 10 ? 'changed' : line));
    const grouped = hunks(diffLines(old.join('\n'), changed.join('\n')), 2);
    expect(grouped.map((h) => (h.kind === 'skipped' ? h.count : h.lines.map((l) => l.text)))).toEqual([
      8,
      ['l8', 'l9', 'l10', 'changed', 'l11', 'l12'],
      7,
    ]);
  });

  it('is one skipped run for an unchanged document', () => {
    expect(hunks(diffLines('a\nb', 'a\nb'))).toEqual([{ kind: 'skipped', count: 2 }]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { checkFilter, checkUpdate, prepareDocument, stripUndefined } from '../src/validate.ts';

/** The message a check throws, or '' when it passes. */
function refusal(check: () => unknown): string {
  try {
    check();
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the shared checks name where a call went wrong', () => {
  it('an undefined value in a filter, by its path through objects and arrays', () => {
    expect(refusal(() => checkFilter({ a: { $in: [1, { b: [2, undefined] }] } }))).toBe(
      'undefined value at a.$in.1.b.1',
    );
    expect(refusal(() => checkFilter({ ok: 1, a: { b: { c: undefined } } }))).toBe('undefined value at a.b.c');
    expect(refusal(() => checkFilter({ a: { b: [1, { c: 2 }] } }))).toBe('');
  });

  it('the first bad field name of a document or an update, depth first, by its path', () => {
    expect(refusal(() => prepareDocument({ a: { b: [{ ok: 1 }, { 'c.d': 1 }] }, z: { $bad: 1 } }))).toBe(
      'field name "c.d" at document.a.b.1 is empty, starts with $ or holds a dot',
    );
    expect(refusal(() => checkUpdate({ $set: { 'x.y': { list: [{ '': 1 }] } } }))).toBe(
      'field name "" at $set.x.y.list.0 is empty, starts with $ or holds a dot',
    );
    expect(refusal(() => checkUpdate({ $push: { list: { $each: [{ ok: 1 }, { $no: 1 }] } } }))).toBe(
      'field name "$no" at $push.list.1 is empty, starts with $ or holds a dot',
    );
    expect(refusal(() => checkUpdate({ $set: { 'a.b': { c: [1, { d: 2 }] } }, $inc: { n: 1 } }))).toBe('');
  });

  it('a path with an empty part or a part starting with $', () => {
    for (const path of ['', '.a', 'a.', 'a..b', '$a', 'a.$b']) {
      expect(refusal(() => checkUpdate({ $set: { [path]: 1 } }))).toBe(
        `invalid field path ${JSON.stringify(path)} in $set`,
      );
    }
    expect(refusal(() => checkUpdate({ $set: { 'a.b$.c': 1, a$: 2 } }))).toBe('');
  });
});

describe('update paths that overlap are refused, however many the update names', () => {
  /** `n` distinct top-level paths (`p0` … ), then `extra`. */
  const paths = (n: number, ...extra: string[]) => [...Array.from({ length: n }, (_, i) => `p${i}`), ...extra];
  const updateOf = (list: readonly string[]) => ({ $set: Object.fromEntries(list.map((path) => [path, 1])) });

  for (const many of [2, 40]) {
    it(`with ${many} other paths`, () => {
      expect(refusal(() => checkUpdate(updateOf(paths(many))))).toBe('');
      // One path the prefix of another, in either order, across operators too.
      expect(refusal(() => checkUpdate(updateOf(paths(many, 'meta.owner', 'meta'))))).toBe(
        'update paths meta and meta.owner conflict',
      );
      expect(refusal(() => checkUpdate({ ...updateOf(paths(many, 'meta')), $unset: { 'meta.owner.id': 1 } }))).toBe(
        'update paths meta and meta.owner.id conflict',
      );
      expect(refusal(() => checkUpdate({ ...updateOf(paths(many, 'n')), $inc: { n: 1 } }))).toBe(
        'update paths n and n conflict',
      );
      // A shared beginning that is not a whole part is no overlap.
      expect(refusal(() => checkUpdate(updateOf(paths(many, 'meta', 'metadata', 'meta_x', 'me.ta'))))).toBe('');
    });
  }
});

describe('the checks see only a call’s own members', () => {
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>)['polluted'];
  });

  it('a member added to Object.prototype is neither an operator, a field nor copied', () => {
    (Object.prototype as Record<string, unknown>)['polluted'] = undefined;
    expect(refusal(() => checkFilter({ a: 1 }))).toBe('');
    expect(refusal(() => checkUpdate({ $set: { a: { b: 1 } } }))).toBe('');
    expect(Object.keys(stripUndefined({ a: { b: 1 } }) as object)).toEqual(['a']);
  });
});

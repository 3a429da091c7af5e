import { describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { listScope, literalPattern, searchScope, statusCounts, taskFilter } from '../../src/domain/read-scope.ts';

const me: VerifiedIdentity = { tenant: 'acme', user: 'alice', session: 's1', scopes: [] };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (isServiceError(error)) return error.code;
    throw error;
  }
}

describe('listScope', () => {
  it("projects the caller's verified session by default", () => {
    expect(listScope(me, undefined)).toEqual({ kind: 'triple', tenant: 'acme', user: 'alice', session: 's1' });
  });

  it('fans in across the named tenants for admin', () => {
    expect(listScope({ ...me, scopes: ['admin'] }, ['a', 'b', 'a'])).toEqual({ kind: 'tenants', tenants: ['a', 'b'] });
  });

  it.each([
    [['other'], 'scope_mismatch'],
    [['acme', 'other'], 'scope_mismatch'],
    [['acme'], 'identity_scope_required'],
  ])('refuses tenant_ids %j without admin with %s', (ids, code) => {
    expect(codeOf(() => listScope(me, ids))).toBe(code);
    expect(codeOf(() => listScope({ ...me, scopes: ['console:fleet'] }, ids))).toBe(code);
  });
});

describe('searchScope', () => {
  it("folds to the caller's tenant and user, every session", () => {
    expect(searchScope(me, undefined)).toEqual({
      kind: 'principals',
      tenants: ['acme'],
      users: ['alice'],
      sessions: undefined,
    });
  });

  it('needs a claim beyond the caller', () => {
    expect(codeOf(() => searchScope(me, { user_ids: ['bob'] }))).toBe('scope_mismatch');
    expect(searchScope({ ...me, scopes: ['console:fleet'] }, { user_ids: ['bob'] })).toMatchObject({ users: ['bob'] });
  });
});

describe('taskFilter', () => {
  it('combines the scope and every given filter', () => {
    expect(
      taskFilter(
        { kind: 'triple', tenant: 't', user: 'u', session: 's' },
        {
          status: ['running'],
          kind: ['foreground'],
          parent_task_id: 'p',
          since: '2030-01-01T01:00:00+01:00',
          until: '2030-01-02T00:00:00Z',
          text: 'a.b',
        },
      ),
    ).toEqual({
      tenant: 't',
      user: 'u',
      session: 's',
      status: { $in: ['running'] },
      kind: { $in: ['foreground'] },
      parent_task_id: 'p',
      created_at: { $gte: '2030-01-01T00:00:00.000Z', $lt: '2030-01-02T00:00:00.000Z' },
      $or: [{ query: { $regex: 'a\\.b', $options: 'i' } }, { goal: { $regex: 'a\\.b', $options: 'i' } }],
    });
  });

  it('spans every session of the principals when sessions are omitted', () => {
    expect(taskFilter({ kind: 'principals', tenants: ['t'], users: ['u'], sessions: undefined }, {})).toEqual({
      tenant: { $in: ['t'] },
      user: { $in: ['u'] },
    });
  });
});

describe('literalPattern', () => {
  it('makes every regular expression metacharacter literal', () => {
    const text = 'a.b*c+d?e^f$g{h}i(j)k|l[m]n\\o';
    expect(new RegExp(literalPattern(text)).test(text)).toBe(true);
    expect(new RegExp(literalPattern('a.b')).test('axb')).toBe(false);
  });
});

describe('statusCounts', () => {
  it('fills every status with zero', () => {
    expect(statusCounts({ running: 2 })).toEqual({
      pending: 0,
      running: 2,
      paused: 0,
      complete: 0,
      failed: 0,
      cancelled: 0,
    });
  });
});

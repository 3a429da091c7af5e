import { describe, expect, it } from 'vitest';
import { foldIsolationFilter, foldSearchFilter, foldTenantFanIn, foldTenantList } from '../src/index.ts';
import { ADMIN, FLEET, PLAIN } from './helpers/tokens.ts';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('foldIsolationFilter (artifacts.list, events.list)', () => {
  it('folds an omitted user to the caller own user without a claim', () => {
    expect(foldIsolationFilter({ verified: PLAIN })).toEqual({
      tenant: 'acme',
      user: 'alice',
      session: undefined,
      crossed: false,
    });
  });

  it('reads the caller own user when it is named, without a claim', () => {
    expect(foldIsolationFilter({ verified: PLAIN, user: 'alice' })).toMatchObject({ user: 'alice', crossed: false });
  });

  it('refuses another user without admin or console:fleet with 403 identity_scope_required', () => {
    expect(codeOf(() => foldIsolationFilter({ verified: PLAIN, user: 'bob' }))).toBe('identity_scope_required');
  });

  it.each([
    ['console:fleet', FLEET],
    ['admin', ADMIN],
  ])('reads the named user with %s', (_claim, verified) => {
    expect(foldIsolationFilter({ verified, user: 'bob' })).toMatchObject({
      tenant: 'acme',
      user: 'bob',
      crossed: true,
    });
  });

  it.each([
    ['console:fleet', FLEET],
    ['admin', ADMIN],
  ])('fans across the tenant when the user is omitted with %s', (_claim, verified) => {
    expect(foldIsolationFilter({ verified })).toMatchObject({ tenant: 'acme', user: undefined, crossed: true });
  });

  it('treats an omitted session as all sessions in scope', () => {
    expect(foldIsolationFilter({ verified: PLAIN }).session).toBeUndefined();
  });

  it('narrows to a named session without a claim', () => {
    expect(foldIsolationFilter({ verified: PLAIN, session: 's-7' })).toMatchObject({ session: 's-7', crossed: false });
  });

  it('refuses another tenant without a claim with 403 scope_mismatch', () => {
    expect(codeOf(() => foldIsolationFilter({ verified: PLAIN, tenant: 'globex' }))).toBe('scope_mismatch');
  });

  it('reads another tenant with console:fleet', () => {
    expect(foldIsolationFilter({ verified: FLEET, tenant: 'globex', user: 'bob' })).toMatchObject({
      tenant: 'globex',
      user: 'bob',
      crossed: true,
    });
  });
});

describe('foldSearchFilter (search.*)', () => {
  it('folds an absent filter to the caller tenant and user without a claim', () => {
    expect(foldSearchFilter({ verified: PLAIN })).toEqual({
      tenant_ids: ['acme'],
      user_ids: ['alice'],
      session_ids: undefined,
      crossed: false,
    });
  });

  it('folds empty id lists like omitted ones', () => {
    expect(foldSearchFilter({ verified: PLAIN, tenant_ids: [], user_ids: [], session_ids: [] })).toMatchObject({
      tenant_ids: ['acme'],
      user_ids: ['alice'],
      session_ids: undefined,
      crossed: false,
    });
  });

  it('accepts the caller own tenant and user named explicitly without a claim', () => {
    expect(foldSearchFilter({ verified: PLAIN, tenant_ids: ['acme'], user_ids: ['alice'] }).crossed).toBe(false);
  });

  it('still folds to the caller own data for an admin who sends no filter', () => {
    expect(foldSearchFilter({ verified: ADMIN })).toMatchObject({
      tenant_ids: ['acme'],
      user_ids: ['alice'],
      crossed: false,
    });
  });

  const refusals: Array<[string, Parameters<typeof foldSearchFilter>[0]]> = [
    ['another tenant', { verified: PLAIN, tenant_ids: ['globex'] }],
    ['more than one tenant', { verified: PLAIN, tenant_ids: ['acme', 'globex'] }],
    ['another user', { verified: PLAIN, user_ids: ['bob'] }],
    ['more than one user', { verified: PLAIN, user_ids: ['alice', 'bob'] }],
    ['more than one session', { verified: PLAIN, session_ids: ['s-1', 's-2'] }],
  ];

  it.each(refusals)('refuses %s without a claim with 403 scope_mismatch', (_name, input) => {
    expect(codeOf(() => foldSearchFilter(input))).toBe('scope_mismatch');
  });

  it.each(refusals)('allows %s with console:fleet and marks it crossed', (_name, input) => {
    expect(foldSearchFilter({ ...input, verified: FLEET }).crossed).toBe(true);
  });

  it.each(refusals)('allows %s with admin and marks it crossed', (_name, input) => {
    expect(foldSearchFilter({ ...input, verified: ADMIN }).crossed).toBe(true);
  });

  it('accepts a single session id without a claim', () => {
    expect(foldSearchFilter({ verified: PLAIN, session_ids: ['s-9'] })).toMatchObject({
      session_ids: ['s-9'],
      crossed: false,
    });
  });

  it('collapses duplicate ids before counting them', () => {
    expect(
      foldSearchFilter({ verified: PLAIN, session_ids: ['s-9', 's-9'], user_ids: ['alice', 'alice'] }),
    ).toMatchObject({
      user_ids: ['alice'],
      session_ids: ['s-9'],
      crossed: false,
    });
  });

  it('returns the named principals as the effective filter under a claim', () => {
    expect(foldSearchFilter({ verified: FLEET, tenant_ids: ['globex', 'initech'], user_ids: ['bob'] })).toMatchObject({
      tenant_ids: ['globex', 'initech'],
      user_ids: ['bob'],
    });
  });
});

describe('foldTenantFanIn (tasks.list, pause.list)', () => {
  it('answers undefined, the own session projection, when tenant_ids is omitted or empty', () => {
    expect(foldTenantFanIn(PLAIN, undefined)).toBeUndefined();
    expect(foldTenantFanIn(PLAIN, [])).toBeUndefined();
  });

  it('grants admin the distinct tenants named, its own included', () => {
    expect(foldTenantFanIn(ADMIN, ['acme', 'globex', 'globex'])).toEqual(['acme', 'globex']);
  });

  it('refuses another tenant without admin, console:fleet included, with 403 scope_mismatch', () => {
    for (const verified of [PLAIN, FLEET]) {
      expect(codeOf(() => foldTenantFanIn(verified, ['globex']))).toBe('scope_mismatch');
    }
  });

  it("refuses the caller's own tenant without admin with 403 identity_scope_required", () => {
    expect(codeOf(() => foldTenantFanIn(PLAIN, ['acme']))).toBe('identity_scope_required');
  });
});

describe('foldTenantList (agents.list)', () => {
  it("reads the caller's own tenant when tenant_ids is omitted, empty or names only it, without a claim", () => {
    for (const tenant_ids of [undefined, [], ['acme', 'acme']]) {
      expect(foldTenantList({ verified: PLAIN, tenant_ids })).toEqual({
        kind: 'tenants',
        tenants: ['acme'],
        crossed: false,
      });
    }
  });

  it.each([
    ['another tenant', ['globex']],
    ['more than one tenant', ['acme', 'globex']],
  ])('refuses %s without admin or console:fleet with 403 scope_mismatch', (_label, tenant_ids) => {
    expect(codeOf(() => foldTenantList({ verified: PLAIN, tenant_ids }))).toBe('scope_mismatch');
  });

  it.each([
    ['console:fleet', FLEET],
    ['admin', ADMIN],
  ])('grants %s the distinct tenants named', (_claim, verified) => {
    expect(foldTenantList({ verified, tenant_ids: ['globex', 'acme', 'globex'] })).toEqual({
      kind: 'tenants',
      tenants: ['globex', 'acme'],
      crossed: true,
    });
  });

  it('refuses all_tenants without a claim with 403 scope_mismatch, and grants it to console:fleet', () => {
    expect(codeOf(() => foldTenantList({ verified: PLAIN, all_tenants: true }))).toBe('scope_mismatch');
    expect(foldTenantList({ verified: FLEET, all_tenants: true })).toEqual({ kind: 'all', crossed: true });
  });

  it('refuses all_tenants with tenant_ids as 400 invalid_request, after the claim', () => {
    expect(codeOf(() => foldTenantList({ verified: FLEET, all_tenants: true, tenant_ids: ['acme'] }))).toBe(
      'invalid_request',
    );
    expect(codeOf(() => foldTenantList({ verified: PLAIN, all_tenants: true, tenant_ids: ['acme'] }))).toBe(
      'scope_mismatch',
    );
  });

  it('treats all_tenants false as omitted', () => {
    expect(foldTenantList({ verified: PLAIN, all_tenants: false })).toMatchObject({ kind: 'tenants', crossed: false });
  });
});

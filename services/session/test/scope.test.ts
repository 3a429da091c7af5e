import { describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { resolveListScope } from '../src/domain/scope.ts';

const me: VerifiedIdentity = { tenant: 't1', user: 'u1', session: 's1', scopes: [] };
const fleet: VerifiedIdentity = { ...me, scopes: ['console:fleet'] };
const admin: VerifiedIdentity = { ...me, scopes: ['admin'] };

describe('resolveListScope', () => {
  it("reads the caller's own tenant and user without tenant_ids", () => {
    expect(resolveListScope(me, undefined)).toEqual({ tenants: ['t1'], user: 'u1' });
    expect(resolveListScope(admin, undefined)).toEqual({ tenants: ['t1'], user: 'u1' });
  });

  it("treats tenant_ids naming only the caller's tenant as the own read without a claim", () => {
    expect(resolveListScope(me, ['t1', 't1'])).toEqual({ tenants: ['t1'], user: 'u1' });
  });

  it('refuses another tenant without a claim with scope_mismatch', () => {
    expect(() => resolveListScope(me, ['t2'])).toThrow(expect.objectContaining({ code: 'scope_mismatch' }));
    expect(() => resolveListScope(me, ['t1', 't2'])).toThrow(expect.objectContaining({ code: 'scope_mismatch' }));
  });

  it('fans in across every user of the named tenants with console:fleet or admin', () => {
    expect(resolveListScope(fleet, ['t2', 't3', 't2'])).toEqual({ tenants: ['t2', 't3'], user: undefined });
    expect(resolveListScope(admin, ['t2'])).toEqual({ tenants: ['t2'], user: undefined });
  });
});

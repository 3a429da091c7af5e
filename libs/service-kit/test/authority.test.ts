import { describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { reconcileIdentity, requireAdmin, requireOwnIdentity } from '../src/index.ts';

const me: VerifiedIdentity = { tenant: 't1', user: 'u1', session: 's1', scopes: [] };
const admin: VerifiedIdentity = { ...me, scopes: ['admin'] };
const fleet: VerifiedIdentity = { ...me, scopes: ['console:fleet'] };

describe('the owners’ authority checks', () => {
  it('requireAdmin lets the admin claim through and refuses anything else with identity_scope_required', () => {
    expect(() => requireAdmin('m', admin)).not.toThrow();
    for (const caller of [me, fleet]) {
      expect(() => requireAdmin('m', caller)).toThrow(expect.objectContaining({ code: 'identity_scope_required' }));
    }
  });

  it('requireOwnIdentity accepts an absent, empty or equal body identity', () => {
    expect(() => requireOwnIdentity('m', me, undefined)).not.toThrow();
    expect(() => requireOwnIdentity('m', me, {})).not.toThrow();
    expect(() => requireOwnIdentity('m', me, { tenant: 't1', user: 'u1', session: 's1', run: 'r' })).not.toThrow();
  });

  it('requireOwnIdentity refuses any differing component with identity_required, whatever the scopes', () => {
    for (const body of [{ tenant: 'x' }, { user: 'x' }, { session: 'x' }]) {
      expect(() => requireOwnIdentity('m', admin, body)).toThrow(expect.objectContaining({ code: 'identity_required' }));
    }
  });

  it('requireOwnIdentity checks only the components named', () => {
    expect(() => requireOwnIdentity('m', me, { tenant: 'x' }, ['user', 'session'])).not.toThrow();
  });

  it('reconcileIdentity applies the registry’s crossing rules', () => {
    expect(reconcileIdentity('artifacts.list', me, {})).toMatchObject({ tenant: 't1', user: 'u1', session: 's1' });
    expect(reconcileIdentity('artifacts.list', admin, { tenant: 't2' })).toMatchObject({ tenant: 't2' });
    expect(() => reconcileIdentity('artifacts.list', me, { tenant: 't2' })).toThrow(
      expect.objectContaining({ code: 'scope_mismatch' }),
    );
    expect(() => reconcileIdentity('no.such.method', me, {})).toThrow(expect.objectContaining({ code: 'internal' }));
  });
});

import { describe, expect, it } from 'vitest';
import type { SteeringTier, VerifiedIdentity } from '@ars/contracts';
import { assertSteeringAllowed, deriveSteeringTier, steeringTierRank } from '../src/index.ts';
import { identity } from './helpers/tokens.ts';

// The controls table of the spec: method and its minimum steering scope.
const CONTROLS: ReadonlyArray<[string, SteeringTier]> = [
  ['cancel', 'owner_user'],
  ['pause', 'owner_user'],
  ['resume', 'owner_user'],
  ['approve', 'owner_user'],
  ['reject', 'owner_user'],
  ['redirect', 'owner_user'],
  ['inject_context', 'session_user'],
  ['user_message', 'session_user'],
  ['prioritize', 'admin'],
];

const OWNER = { tenant: 'acme', user: 'alice' };

const CALLERS: Record<string, VerifiedIdentity> = {
  'the owner': identity({ session: 'another-session' }),
  'the owner holding console:fleet': identity({ scopes: ['console:fleet'] }),
  'another user of the tenant': identity({ user: 'bob' }),
  'another user of the tenant holding console:fleet': identity({ user: 'bob', scopes: ['console:fleet'] }),
  'a same-named user of another tenant': identity({ tenant: 'globex' }),
  'an admin of the tenant': identity({ user: 'root', scopes: ['admin'] }),
  'an admin of another tenant': identity({ tenant: 'globex', user: 'root', scopes: ['admin'] }),
};

// Expected outcome per caller: allowed below admin for the owner; nothing for
// anyone else without admin; everything for admin in any tenant.
function expected(caller: string, minimum: SteeringTier): 'allowed' | 'scope_mismatch' {
  if (caller.startsWith('an admin')) return 'allowed';
  if (caller.startsWith('the owner')) return minimum === 'admin' ? 'scope_mismatch' : 'allowed';
  return 'scope_mismatch';
}

function outcome(caller: VerifiedIdentity, minimum: SteeringTier): string {
  try {
    assertSteeringAllowed(caller, OWNER, minimum);
    return 'allowed';
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('steering tier table', () => {
  const rows = CONTROLS.flatMap(([method, minimum]) =>
    Object.keys(CALLERS).map((caller) => [method, minimum, caller, expected(caller, minimum)] as const),
  );

  it.each(rows)('%s (minimum %s) by %s is %s', (_method, minimum, caller, result) => {
    expect(outcome(CALLERS[caller] as VerifiedIdentity, minimum)).toBe(result);
  });
});

describe('deriveSteeringTier', () => {
  const rows: Array<[string, VerifiedIdentity, SteeringTier | undefined]> = [
    ['the admin claim in the owner tenant', identity({ user: 'root', scopes: ['admin'] }), 'admin'],
    ['the admin claim in another tenant', identity({ tenant: 'globex', scopes: ['admin'] }), 'admin'],
    ['owning the run (same tenant and user)', identity(), 'owner_user'],
    ['owning the run from another session', identity({ session: 's-9' }), 'owner_user'],
    ['another user of the same tenant', identity({ user: 'bob' }), undefined],
    ['console:fleet without owning the run', identity({ user: 'bob', scopes: ['console:fleet'] }), undefined],
    ['the same user name in another tenant', identity({ tenant: 'globex' }), undefined],
  ];

  it.each(rows)('derives from %s the tier %s', (_name, caller, tier) => {
    expect(deriveSteeringTier(caller, OWNER)).toBe(tier);
  });

  it('ignores a body scope member claiming admin', () => {
    const caller = { ...identity({ user: 'bob' }), scope: 'admin' };
    expect(deriveSteeringTier(caller, OWNER)).toBeUndefined();
    expect(outcome(caller, 'session_user')).toBe('scope_mismatch');
  });

  it('orders the tiers session_user < owner_user < admin', () => {
    expect(steeringTierRank('session_user')).toBeLessThan(steeringTierRank('owner_user'));
    expect(steeringTierRank('owner_user')).toBeLessThan(steeringTierRank('admin'));
  });

  it('returns the derived tier when steering is allowed', () => {
    expect(assertSteeringAllowed(identity(), OWNER, 'session_user')).toBe('owner_user');
  });

  it('names cross-tenant steering without admin in the refusal', () => {
    expect(() => assertSteeringAllowed(identity({ tenant: 'globex' }), OWNER, 'session_user')).toThrow(
      /cross-tenant steering requires admin/,
    );
  });

  it('refuses with HTTP 403', () => {
    expect(() => assertSteeringAllowed(identity(), OWNER, 'admin')).toThrow(
      expect.objectContaining({ code: 'scope_mismatch', status: 403 }),
    );
  });
});

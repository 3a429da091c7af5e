import { describe, expect, it } from 'vitest';
import { canFanIn, hasScope, isAdmin } from '../src/index.ts';
import type { CrossingClaim } from '@ars/contracts';

describe('scope vocabulary', () => {
  it('hasScope matches a scope exactly', () => {
    expect(hasScope(['console:fleet'], 'console:fleet')).toBe(true);
    expect(hasScope(['Console:Fleet', 'console:fleet:read'], 'console:fleet')).toBe(false);
  });

  it('isAdmin needs the admin scope itself', () => {
    expect(isAdmin(['admin'])).toBe(true);
    expect(isAdmin(['console:fleet', 'agent_config:user', 'superadmin'])).toBe(false);
  });

  const table: Array<[readonly string[], CrossingClaim, boolean]> = [
    [['admin'], 'admin', true],
    [['console:fleet'], 'admin', false],
    [[], 'admin', false],
    [['admin'], 'admin_or_fleet', true],
    [['console:fleet'], 'admin_or_fleet', true],
    [['agent_config:user'], 'admin_or_fleet', false],
    [[], 'admin_or_fleet', false],
    [['admin', 'console:fleet'], 'never', false],
  ];

  it.each(table)('canFanIn(%j, %s) is %s', (scopes, claim, expected) => {
    expect(canFanIn(scopes, claim)).toBe(expected);
  });
});

import { SCOPES } from '@ars/contracts';
import type { CrossingClaim, Scope } from '@ars/contracts';

/** True when the verified scopes contain `scope` (exact, case-sensitive match). */
export function hasScope(scopes: readonly string[], scope: Scope): boolean {
  return scopes.includes(scope);
}

/** True when the verified scopes contain `admin`. */
export function isAdmin(scopes: readonly string[]): boolean {
  return hasScope(scopes, SCOPES.admin);
}

/**
 * True when the scopes satisfy a crossing claim: `admin` needs `admin`;
 * `admin_or_fleet` needs `admin` or `console:fleet`; `never` is satisfied by
 * no scope at all.
 */
export function canFanIn(scopes: readonly string[], claim: CrossingClaim): boolean {
  switch (claim) {
    case 'admin':
      return isAdmin(scopes);
    case 'admin_or_fleet':
      return isAdmin(scopes) || hasScope(scopes, SCOPES.consoleFleet);
    case 'never':
      return false;
  }
}

import { describe, expect, it } from 'vitest';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';
import { reconcileBodyIdentity } from '../src/index.ts';
import type { IdentityComponent, ReconcileMethod } from '../src/index.ts';
import { ADMIN, FLEET, PLAIN } from './helpers/tokens.ts';

// Small registry rows carrying only the members the gate reads.
const plain: ReconcileMethod = { name: 'tasks.get' };
const artifactsList: ReconcileMethod = {
  name: 'artifacts.list',
  crossing: { tenant: 'admin_or_fleet', user: 'admin_or_fleet' },
};
const artifactsPut: ReconcileMethod = { name: 'artifacts.put', crossing: { tenant: 'admin' } };
const artifactsDelete: ReconcileMethod = { name: 'artifacts.delete', crossing: { tenant: 'admin' } };
const getRef: ReconcileMethod = { name: 'artifacts.get_ref', crossing: { tenant: 'never' } };
const posture = (name: string): ReconcileMethod => ({ name, crossing: { tenant: 'admin_or_fleet' } });
const topology: ReconcileMethod = { name: 'topology.snapshot', crossing: { tenant: 'admin' } };
const stateHistory: ReconcileMethod = {
  name: 'state.history',
  crossing: { tenant: 'admin', user: 'admin', session: 'admin', refusal: 'not_found' },
};
const sessionsDelete: ReconcileMethod = { name: 'sessions.delete', ownIdentityOnly: true };

const CALLERS = { admin: ADMIN, 'console:fleet': FLEET, 'no scope': PLAIN } as const;
type Caller = keyof typeof CALLERS;

function outcome(verified: VerifiedIdentity, body: IdentityScope | undefined, method: ReconcileMethod): string {
  try {
    const { crossed } = reconcileBodyIdentity({ verified, body, method });
    return crossed.length === 0 ? 'own' : `crossed ${crossed.join('+')}`;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

const OTHER: Record<IdentityComponent, IdentityScope> = {
  tenant: { tenant: 'globex' },
  user: { user: 'bob' },
  session: { session: 's-2' },
};

describe('reconcileBodyIdentity: body identity reconciliation table', () => {
  it('backfills an empty body identity from the verified identity', () => {
    expect(reconcileBodyIdentity({ verified: PLAIN, body: {}, method: plain })).toEqual({
      identity: { tenant: 'acme', user: 'alice', session: 's-1' },
      crossed: [],
    });
  });

  it('backfills an absent body identity from the verified identity', () => {
    expect(reconcileBodyIdentity({ verified: PLAIN, body: undefined, method: plain }).identity).toEqual({
      tenant: 'acme',
      user: 'alice',
      session: 's-1',
    });
  });

  it('backfills the members a partial body identity omits', () => {
    const { identity } = reconcileBodyIdentity({ verified: PLAIN, body: { user: 'alice' }, method: plain });
    expect(identity).toEqual({ tenant: 'acme', user: 'alice', session: 's-1' });
  });

  it('accepts a body identity equal to the verified one without any crossing', () => {
    expect(outcome(PLAIN, { tenant: 'acme', user: 'alice', session: 's-1' }, plain)).toBe('own');
  });

  it('keeps run and scope untouched through the backfill', () => {
    const { identity } = reconcileBodyIdentity({
      verified: PLAIN,
      body: { run: 'task-9', scope: 'admin' },
      method: plain,
    });
    expect(identity).toEqual({ tenant: 'acme', user: 'alice', session: 's-1', run: 'task-9', scope: 'admin' });
  });

  it.each([
    ['a plain caller', PLAIN],
    ['a console:fleet caller', FLEET],
    ['an admin caller', ADMIN],
  ])('rejects a differing user with 401 identity_required for %s', (_name, caller) => {
    expect(outcome(caller, OTHER.user, plain)).toBe('identity_required');
  });

  it.each([
    ['a plain caller', PLAIN],
    ['an admin caller', ADMIN],
  ])('rejects a differing session with 401 identity_required for %s', (_name, caller) => {
    expect(outcome(caller, OTHER.session, plain)).toBe('identity_required');
  });

  it.each([
    ['a plain caller', PLAIN],
    ['an admin caller', ADMIN],
  ])('rejects a differing tenant off the cross-tenant surfaces with 401 identity_required for %s', (_name, caller) => {
    expect(outcome(caller, OTHER.tenant, plain)).toBe('identity_required');
  });

  it('does not let a body scope of admin widen anything', () => {
    expect(outcome(PLAIN, { tenant: 'globex', scope: 'admin' }, posture('runtime.info'))).toBe('scope_mismatch');
  });

  it('reports an outright contradiction (401) before a missing claim (403)', () => {
    expect(outcome(PLAIN, { tenant: 'globex', session: 's-2' }, artifactsList)).toBe('identity_required');
  });

  it('lists several granted crossings in triple order', () => {
    expect(outcome(ADMIN, { session: 's-2', user: 'bob', tenant: 'globex' }, stateHistory)).toBe(
      'crossed tenant+user+session',
    );
  });

  it('returns the crossed identity as the effective one', () => {
    const { identity } = reconcileBodyIdentity({ verified: FLEET, body: { tenant: 'globex' }, method: artifactsList });
    expect(identity).toEqual({ tenant: 'globex', user: 'alice', session: 's-1' });
  });
});

describe('reconcileBodyIdentity: cross-tenant surfaces table', () => {
  const rows: Array<[string, ReconcileMethod, IdentityComponent, Caller, string]> = [
    ['artifacts.list', artifactsList, 'tenant', 'admin', 'crossed tenant'],
    ['artifacts.list', artifactsList, 'tenant', 'console:fleet', 'crossed tenant'],
    ['artifacts.list', artifactsList, 'tenant', 'no scope', 'scope_mismatch'],
    ['artifacts.list', artifactsList, 'user', 'admin', 'crossed user'],
    ['artifacts.list', artifactsList, 'user', 'console:fleet', 'crossed user'],
    ['artifacts.list', artifactsList, 'user', 'no scope', 'identity_scope_required'],
    ['artifacts.list', artifactsList, 'session', 'admin', 'identity_required'],
    ['artifacts.put', artifactsPut, 'tenant', 'admin', 'crossed tenant'],
    ['artifacts.put', artifactsPut, 'tenant', 'console:fleet', 'scope_mismatch'],
    ['artifacts.put', artifactsPut, 'tenant', 'no scope', 'scope_mismatch'],
    ['artifacts.put', artifactsPut, 'user', 'admin', 'identity_required'],
    ['artifacts.delete', artifactsDelete, 'tenant', 'admin', 'crossed tenant'],
    ['artifacts.delete', artifactsDelete, 'tenant', 'console:fleet', 'scope_mismatch'],
    ['artifacts.delete', artifactsDelete, 'tenant', 'no scope', 'scope_mismatch'],
    ['artifacts.get_ref', getRef, 'tenant', 'admin', 'scope_mismatch'],
    ['artifacts.get_ref', getRef, 'tenant', 'console:fleet', 'scope_mismatch'],
    ['artifacts.get_ref', getRef, 'tenant', 'no scope', 'scope_mismatch'],
    ...['runtime.info', 'runtime.health', 'metrics.snapshot', 'governance.posture', 'llm.posture'].flatMap(
      (name): Array<[string, ReconcileMethod, IdentityComponent, Caller, string]> => [
        [name, posture(name), 'tenant', 'admin', 'crossed tenant'],
        [name, posture(name), 'tenant', 'console:fleet', 'crossed tenant'],
        [name, posture(name), 'tenant', 'no scope', 'scope_mismatch'],
      ],
    ),
    ['topology.snapshot', topology, 'tenant', 'admin', 'crossed tenant'],
    ['topology.snapshot', topology, 'tenant', 'console:fleet', 'scope_mismatch'],
    ['topology.snapshot', topology, 'tenant', 'no scope', 'scope_mismatch'],
    ...(['tenant', 'user', 'session'] as const).flatMap(
      (component): Array<[string, ReconcileMethod, IdentityComponent, Caller, string]> => [
        ['state.history', stateHistory, component, 'admin', `crossed ${component}`],
        ['state.history', stateHistory, component, 'console:fleet', 'not_found'],
        ['state.history', stateHistory, component, 'no scope', 'not_found'],
      ],
    ),
    ...(['tenant', 'user', 'session'] as const).flatMap(
      (component): Array<[string, ReconcileMethod, IdentityComponent, Caller, string]> => [
        ['sessions.delete', sessionsDelete, component, 'admin', 'identity_required'],
        ['sessions.delete', sessionsDelete, component, 'no scope', 'identity_required'],
      ],
    ),
  ];

  it.each(rows)(
    '%s with a differing %s for a caller with %s gives %s',
    (_name, method, component, caller, expected) => {
      expect(outcome(CALLERS[caller], OTHER[component], method)).toBe(expected);
    },
  );

  it('answers a refused state.history crossing exactly like a missing session', () => {
    try {
      reconcileBodyIdentity({ verified: PLAIN, body: { user: 'bob' }, method: stateHistory });
    } catch (error) {
      expect(error).toMatchObject({ code: 'not_found', status: 404, message: 'state.history: not found' });
      return;
    }
    throw new Error('expected not_found');
  });

  it('lets sessions.delete erase the caller own triple', () => {
    expect(outcome(PLAIN, { tenant: 'acme', user: 'alice', session: 's-1' }, sessionsDelete)).toBe('own');
  });
});

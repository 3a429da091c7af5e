import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import {
  ADMIN,
  FLEET,
  NONE,
  artifactOf,
  caller,
  putBody,
  startArtifactHarness,
  uniqueTenant,
} from './support/harness.ts';
import type { ArtifactHarness } from './support/harness.ts';

/**
 * The cross-tenant and folding table of the Authentication section, for every
 * artifact method, with and without admin and console:fleet. Calls carry the
 * verified identity in headers and the body identity the gateway forwards
 * after reconciliation: tenant and session backfilled, `user` exactly as the
 * caller named it (its absence is what fans out on artifacts.list). Rows the
 * gateway would refuse at the edge are sent as named, to show the service
 * refuses them identically.
 */

type Scopes = readonly string[];
type Label = 'a1' | 'a2' | 'b1' | 'c1' | 'x1';

const A = uniqueTenant('A');
const B = uniqueTenant('B');

/** Who owns each fixture artifact. */
const FIXTURE: Record<Label, { tenant: string; user: string; session: string }> = {
  a1: { tenant: A, user: 'alice', session: 's1' },
  a2: { tenant: A, user: 'alice', session: 's2' },
  b1: { tenant: A, user: 'bob', session: 's1' },
  c1: { tenant: B, user: 'carol', session: 's1' },
  x1: { tenant: B, user: 'alice', session: 's9' },
};

/** The caller of every row: alice of tenant A in session s1. */
function alice(scopes: Scopes): VerifiedIdentity {
  return caller(A, 'alice', 's1', scopes);
}

const SCOPE_NAMES: Record<string, Scopes> = { none: NONE, fleet: FLEET, admin: ADMIN };

describe('artifact access table', () => {
  let h: ArtifactHarness;
  const ids = {} as Record<Label, string>;
  const labelOf = new Map<string, Label>();

  beforeAll(async () => {
    h = await startArtifactHarness();
    for (const [label, owner] of Object.entries(FIXTURE) as [Label, (typeof FIXTURE)[Label]][]) {
      const identity = caller(owner.tenant, owner.user, owner.session);
      const id = artifactOf(
        await h.call(identity, 'artifacts.put', putBody({}, label, { name: `file-${label}` })),
      ).artifact_id;
      ids[label] = id;
      labelOf.set(id, label);
    }
  });

  afterAll(async () => {
    await h?.stop();
  });

  const labels = (items: { artifact_id: string }[]) => items.map((a) => labelOf.get(a.artifact_id) ?? '?').sort();

  describe('artifacts.list', () => {
    // [scopes, body identity as forwarded, filter, expected labels or error code]
    const ROWS: [string, Record<string, string>, Record<string, string> | undefined, Label[] | string][] = [
      ['none', { tenant: A, session: 's1' }, undefined, ['a1', 'a2']],
      ['none', { tenant: A, user: 'alice', session: 's1' }, undefined, ['a1', 'a2']],
      ['none', { tenant: A, session: 's1' }, { session: 's2' }, ['a2']],
      ['none', { tenant: A, user: 'bob', session: 's1' }, undefined, 'identity_scope_required'],
      ['none', { tenant: B, session: 's1' }, undefined, 'scope_mismatch'],
      ['none', { tenant: B, user: 'carol', session: 's1' }, undefined, 'scope_mismatch'],
      ['none', { tenant: A, session: 's2' }, undefined, 'identity_required'],
      ['fleet', { tenant: A, session: 's1' }, undefined, ['a1', 'a2', 'b1']],
      ['fleet', { tenant: A, user: 'alice', session: 's1' }, undefined, ['a1', 'a2']],
      ['fleet', { tenant: A, user: 'bob', session: 's1' }, undefined, ['b1']],
      ['fleet', { tenant: A, session: 's1' }, { session: 's1' }, ['a1', 'b1']],
      ['fleet', { tenant: B, session: 's1' }, undefined, ['c1', 'x1']],
      ['fleet', { tenant: B, user: 'carol', session: 's1' }, undefined, ['c1']],
      ['fleet', { tenant: B, user: 'nobody', session: 's1' }, undefined, []],
      ['admin', { tenant: A, session: 's1' }, undefined, ['a1', 'a2', 'b1']],
      ['admin', { tenant: A, user: 'bob', session: 's1' }, undefined, ['b1']],
      ['admin', { tenant: B, session: 's1' }, undefined, ['c1', 'x1']],
      ['admin', { tenant: B, user: 'alice', session: 's1' }, { session: 's9' }, ['x1']],
    ];

    it.each(ROWS)('with %s scopes and identity %j, filter %j gives %j', async (scopes, identity, filter, expected) => {
      const body = { identity, ...(filter === undefined ? {} : { filter }) };
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'artifacts.list', body);
      if (typeof expected === 'string') {
        expect(outcome).toMatchObject({ ok: false, code: expected });
        return;
      }
      expect(outcome.ok).toBe(true);
      expect(labels((outcome as { result: { items: { artifact_id: string }[] } }).result.items)).toEqual(expected);
    });
  });

  describe('artifacts.get', () => {
    const ROWS: [string, Label, Record<string, string>, string][] = [
      ['none', 'a1', {}, 'ok'],
      ['none', 'a2', {}, 'ok'],
      ['none', 'b1', {}, 'not_found'],
      ['none', 'c1', {}, 'not_found'],
      ['none', 'x1', {}, 'not_found'],
      ['fleet', 'b1', {}, 'not_found'],
      ['fleet', 'c1', {}, 'not_found'],
      ['admin', 'b1', {}, 'not_found'],
      ['admin', 'c1', {}, 'not_found'],
      ['admin', 'c1', { tenant: B }, 'identity_required'],
      ['none', 'b1', { user: 'bob' }, 'identity_required'],
    ];

    it.each(ROWS)('with %s scopes reading %s (identity %j) gives %s', async (scopes, label, identity, expected) => {
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'artifacts.get', {
        identity,
        artifact_id: ids[label],
      });
      if (expected === 'ok')
        expect(outcome).toMatchObject({ ok: true, result: { artifact: { artifact_id: ids[label] } } });
      else expect(outcome).toMatchObject({ ok: false, code: expected });
    });
  });

  describe('artifacts.get_ref', () => {
    const ROWS: [string, Label, Record<string, string>, string][] = [
      ['none', 'a1', {}, 'presign_unsupported'],
      ['none', 'b1', {}, 'not_found'],
      ['none', 'c1', {}, 'not_found'],
      ['none', 'c1', { tenant: B }, 'scope_mismatch'],
      ['fleet', 'c1', { tenant: B }, 'scope_mismatch'],
      ['admin', 'c1', { tenant: B }, 'scope_mismatch'],
      ['admin', 'c1', {}, 'not_found'],
    ];

    it.each(ROWS)('with %s scopes on %s (identity %j) gives %s', async (scopes, label, identity, expected) => {
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'artifacts.get_ref', {
        identity,
        artifact_id: ids[label],
      });
      expect(outcome).toMatchObject({ ok: false, code: expected });
    });
  });

  describe('artifacts.put', () => {
    const ROWS: [string, Record<string, string>, { tenant: string; user: string; session: string } | string][] = [
      ['none', {}, { tenant: A, user: 'alice', session: 's1' }],
      ['none', { tenant: A, user: 'alice', session: 's1' }, { tenant: A, user: 'alice', session: 's1' }],
      ['none', { tenant: B }, 'scope_mismatch'],
      ['fleet', { tenant: B }, 'scope_mismatch'],
      ['admin', { tenant: B }, { tenant: B, user: 'alice', session: 's1' }],
      ['none', { user: 'bob' }, 'identity_required'],
      ['admin', { user: 'bob' }, 'identity_required'],
      ['admin', { session: 's2' }, 'identity_required'],
    ];

    it.each(ROWS)('with %s scopes and identity %j stores under %j', async (scopes, identity, expected) => {
      const before = await h.objectNames();
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'artifacts.put', putBody(identity, 'put-row'));
      if (typeof expected === 'string') {
        expect(outcome).toMatchObject({ ok: false, code: expected });
        expect(await h.objectNames()).toEqual(before);
        return;
      }
      expect(outcome).toMatchObject({ ok: true, result: { artifact: expected } });
    });
  });

  describe('artifacts.delete', () => {
    /** A fresh victim per row, so rows do not depend on each other. */
    async function victim(owner: { tenant: string; user: string; session: string }): Promise<string> {
      const identity = caller(owner.tenant, owner.user, owner.session);
      return artifactOf(await h.call(identity, 'artifacts.put', putBody({}, 'victim'))).artifact_id;
    }

    const ROWS: [string, 'own' | 'bob' | 'carol', Record<string, string>, boolean | string][] = [
      ['none', 'own', {}, 'identity_scope_required'],
      ['fleet', 'own', {}, 'identity_scope_required'],
      ['none', 'carol', { tenant: B }, 'scope_mismatch'],
      ['fleet', 'carol', { tenant: B }, 'scope_mismatch'],
      ['admin', 'own', {}, true],
      ['admin', 'bob', {}, true],
      ['admin', 'carol', {}, false],
      ['admin', 'carol', { tenant: B }, true],
    ];
    const OWNERS = {
      own: { tenant: A, user: 'alice', session: 's1' },
      bob: { tenant: A, user: 'bob', session: 's1' },
      carol: { tenant: B, user: 'carol', session: 's1' },
    };

    it.each(ROWS)('with %s scopes on %s artifact (identity %j) gives %s', async (scopes, whose, identity, expected) => {
      const owner = OWNERS[whose];
      const artifactId = await victim(owner);
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'artifacts.delete', {
        identity,
        artifact_id: artifactId,
      });
      const ownerView = caller(owner.tenant, owner.user, owner.session);
      const still = await h.outcome(ownerView, 'artifacts.get', { identity: {}, artifact_id: artifactId });
      if (typeof expected === 'string') {
        expect(outcome).toMatchObject({ ok: false, code: expected });
        expect(still.ok).toBe(true);
        return;
      }
      expect(outcome).toMatchObject({ ok: true, result: { artifact_id: artifactId, deleted: expected } });
      expect(still.ok).toBe(!expected);
    });
  });

  describe('search.artifacts', () => {
    const ROWS: [string, Record<string, string[]> | undefined, Label[] | string][] = [
      ['none', undefined, ['a1', 'a2']],
      ['none', { session_ids: ['s2'] }, ['a2']],
      ['none', { tenant_ids: [A], user_ids: ['alice'] }, ['a1', 'a2']],
      ['none', { user_ids: ['bob'] }, 'scope_mismatch'],
      ['none', { tenant_ids: [B] }, 'scope_mismatch'],
      ['none', { session_ids: ['s1', 's2'] }, 'scope_mismatch'],
      ['fleet', undefined, ['a1', 'a2']],
      ['fleet', { user_ids: ['alice', 'bob'] }, ['a1', 'a2', 'b1']],
      ['fleet', { tenant_ids: [B] }, ['x1']],
      ['fleet', { session_ids: ['s1', 's2'] }, ['a1', 'a2']],
      ['admin', { tenant_ids: [A, B], user_ids: ['alice', 'carol'] }, ['a1', 'a2', 'c1', 'x1']],
      ['admin', { tenant_ids: [B], user_ids: ['carol'] }, ['c1']],
    ];

    it.each(ROWS)('with %s scopes and filter %j gives %j', async (scopes, filter, expected) => {
      const body = { identity: {}, query: 'file-', ...(filter === undefined ? {} : { filter }) };
      const outcome = await h.outcome(alice(SCOPE_NAMES[scopes]!), 'search.artifacts', body);
      if (typeof expected === 'string') {
        expect(outcome).toMatchObject({ ok: false, code: expected });
        return;
      }
      expect(outcome.ok).toBe(true);
      const hits = (outcome as { result: { items: { id: string }[] } }).result.items;
      expect(labels(hits.map((hit) => ({ artifact_id: hit.id })))).toEqual(expected);
    });
  });
});

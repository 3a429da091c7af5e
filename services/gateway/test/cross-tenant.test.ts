import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bodyFor, routeOf } from './support/bodies.ts';
import { createHarness, liveInstance } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
  h.discovery.instances = [liveInstance('governance', ['governance.posture', 'llm.posture'])];
});

afterEach(async () => {
  await h.close();
});

const ADMIN = ['admin'];
const FLEET = ['console:fleet'];
const NONE: string[] = [];

const call = (name: string, identity: Record<string, string>, scopes: string[], extra: Record<string, unknown> = {}) =>
  h.post(routeOf(name), bodyFor(name, identity, extra), { token: h.token({ scopes }) });

const audits = () => h.events.published.filter((event) => event.type === 'audit.admin_scope_used');

/** The cross-tenant surfaces table: [method, crossed identity, claim that grants, claims that are refused, refusal]. */
const SURFACES: ReadonlyArray<readonly [string, Record<string, string>, string[][], string[][], number, string]> = [
  ['artifacts.list', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['artifacts.list', { user: 'u2' }, [ADMIN, FLEET], [NONE], 403, 'identity_scope_required'],
  ['artifacts.put', { tenant: 't2' }, [ADMIN], [FLEET, NONE], 403, 'scope_mismatch'],
  ['artifacts.delete', { tenant: 't2' }, [ADMIN], [FLEET, NONE], 403, 'scope_mismatch'],
  ['artifacts.get_ref', { tenant: 't2' }, [], [ADMIN, FLEET, NONE], 403, 'scope_mismatch'],
  ['runtime.info', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['runtime.health', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['runtime.counters', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['runtime.drivers', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['metrics.snapshot', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['governance.posture', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['llm.posture', { tenant: 't2' }, [ADMIN, FLEET], [NONE], 403, 'scope_mismatch'],
  ['topology.snapshot', { tenant: 't2' }, [ADMIN], [FLEET, NONE], 403, 'scope_mismatch'],
  ['state.history', { tenant: 't2', user: 'u2', session: 's2' }, [ADMIN], [FLEET, NONE], 404, 'not_found'],
  // Admin impersonation of a tenant (decisions, "tasks.get filters by the full triple").
  ['tasks.get', { tenant: 't2' }, [ADMIN], [FLEET, NONE], 404, 'not_found'],
];

describe('cross-tenant surfaces', () => {
  for (const [name, identity, granted, refused, status, code] of SURFACES) {
    const crossing = Object.keys(identity).join('+');
    for (const scopes of granted) {
      it(`lets ${name} cross ${crossing} with ${scopes.join(',')} and audits it`, async () => {
        const response = await call(name, identity, scopes);
        expect(response.statusCode, response.body).toBe(200);
        expect(audits().length).toBeGreaterThan(0);
        for (const event of audits()) {
          expect(event.payload).toMatchObject({
            Actor: { tenant: 't1', user: 'u1', session: 's1' },
            Requester: { tenant: 't1', user: 'u1', session: 's1' },
            Impersonating: {
              tenant: identity.tenant ?? 't1',
              // artifacts.list without a user fans across the tenant: audited as user '*'.
              user: identity.user ?? (name === 'artifacts.list' ? expect.stringMatching(/^(u1|\*)$/) : 'u1'),
              session: identity.session ?? 's1',
            },
            Method: name,
          });
          expect(event.identity).toMatchObject({ tenant: 't1', user: 'u1', session: 's1' });
        }
      });
    }
    for (const scopes of refused) {
      it(`refuses ${name} crossing ${crossing} with ${scopes.length === 0 ? 'no claim' : scopes.join(',')} as ${status} ${code}`, async () => {
        const response = await call(name, identity, scopes);
        expect(response.statusCode).toBe(status);
        expect(response.json()).toMatchObject({ code });
        expect(h.rpc.calls).toHaveLength(0);
        expect(audits()).toHaveLength(0);
      });
    }
  }

  it('publishes one audit event per crossed component', async () => {
    await call('state.history', { tenant: 't2', user: 'u2', session: 's2' }, ADMIN);
    expect(audits().map((event) => event.payload.Reason)).toEqual([
      'tenant crossed under admin',
      'user crossed under admin',
      'session crossed under admin',
    ]);
  });

  it('names console:fleet as the granting claim when the caller is not admin', async () => {
    await call('artifacts.list', { tenant: 't2' }, FLEET);
    expect(audits()[0]?.payload.Reason).toBe('tenant crossed under console:fleet');
  });

  it('publishes no audit event for an own-data call', async () => {
    await call('artifacts.list', {}, NONE);
    expect(audits()).toHaveLength(0);
  });

  it("audits an admin's artifacts.list without a user once, as a fan-in across the tenant", async () => {
    await call('artifacts.list', {}, ADMIN);
    expect(audits().map((event) => event.payload.Reason)).toEqual(['user crossed under admin']);
  });

  it('still answers a granted crossing when the audit event cannot be published', async () => {
    h.events.failWith = new Error('bus down');
    const response = await call('artifacts.list', { tenant: 't2' }, ADMIN);
    expect(response.statusCode).toBe(200);
    expect(h.rpc.calls).toHaveLength(1);
  });
});

describe('cross-tenant surfaces: tasks.get impersonation', () => {
  it("forwards an admin's tasks.get naming another tenant with the reconciled identity", async () => {
    const response = await call('tasks.get', { tenant: 't2' }, ADMIN);
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last).toMatchObject({
      method: 'tasks.get',
      identity: { tenant: 't1', user: 'u1', session: 's1', scopes: ADMIN },
      body: { identity: { tenant: 't2', user: 'u1', session: 's1' } },
    });
    expect(audits().map((event) => event.payload.Reason)).toEqual(['tenant crossed under admin']);
  });

  it('refuses tasks.get naming another user or session, admin or not, as 401 identity_required', async () => {
    const identities: Record<string, string>[] = [{ user: 'u2' }, { session: 's2' }, { tenant: 't2', user: 'u2' }];
    for (const scopes of [ADMIN, NONE]) {
      for (const identity of identities) {
        const response = await call('tasks.get', identity, scopes);
        expect(response.statusCode).toBe(401);
        expect(response.json()).toMatchObject({ code: 'identity_required' });
      }
    }
    expect(h.rpc.calls).toHaveLength(0);
    expect(audits()).toHaveLength(0);
  });

  it("publishes no audit event for an admin's tasks.get in its own tenant", async () => {
    const response = await call('tasks.get', { tenant: 't1' }, ADMIN);
    expect(response.statusCode).toBe(200);
    expect(audits()).toHaveLength(0);
  });
});

describe('cross-tenant surfaces: XA list fan-in', () => {
  for (const name of ['tasks.list', 'pause.list']) {
    it(`lets an admin's ${name} fan in to another tenant and audits it`, async () => {
      const response = await call(name, {}, ADMIN, { filter: { tenant_ids: ['t2'] } });
      expect(response.statusCode).toBe(200);
      expect(h.rpc.last?.body).toMatchObject({ filter: { tenant_ids: ['t2'] } });
      expect(audits()).toHaveLength(1);
      expect(audits()[0]?.payload).toEqual({
        Actor: { tenant: 't1', user: 'u1', session: 's1' },
        Requester: { tenant: 't1', user: 'u1', session: 's1' },
        Impersonating: { tenant: 't2', user: '*', session: '*' },
        Reason: 'filter.tenant_ids crossed under admin',
        Method: name,
      });
      expect(audits()[0]?.identity).toMatchObject({ tenant: 't1', user: 'u1', session: 's1' });
    });

    it(`audits an admin's ${name} over its own tenant and another once, naming both`, async () => {
      await call(name, {}, ADMIN, { filter: { tenant_ids: ['t1', 't2', 't2'] } });
      expect(audits().map((event) => event.payload.Impersonating)).toEqual([
        { tenant: 't1,t2', user: '*', session: '*' },
      ]);
    });

    it(`audits an admin's ${name} over its own tenant only: a fan-in across its users`, async () => {
      await call(name, {}, ADMIN, { filter: { tenant_ids: ['t1'] } });
      expect(audits()).toHaveLength(1);
    });

    for (const [label, scopes] of [
      ['no claim', NONE],
      ['console:fleet', FLEET],
    ] as const) {
      it(`refuses ${name} naming another tenant with ${label} as 403 scope_mismatch, unaudited`, async () => {
        const response = await call(name, {}, scopes, { filter: { tenant_ids: ['t2'] } });
        expect(response.statusCode).toBe(403);
        expect(response.json()).toMatchObject({ code: 'scope_mismatch' });
        expect(h.rpc.calls).toHaveLength(0);
        expect(audits()).toHaveLength(0);
      });
    }

    it(`refuses ${name} naming only the caller's tenant without admin as 403 identity_scope_required`, async () => {
      const response = await call(name, {}, FLEET, { filter: { tenant_ids: ['t1'] } });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 'identity_scope_required' });
      expect(h.rpc.calls).toHaveLength(0);
    });

    it(`publishes no audit event for ${name} of the caller's own session`, async () => {
      const response = await call(name, {}, ADMIN);
      expect(response.statusCode).toBe(200);
      expect(audits()).toHaveLength(0);
    });
  }
});

describe('cross-tenant surfaces: agents.list fan-in (X)', () => {
  for (const [label, scopes] of [
    ['admin', ADMIN],
    ['console:fleet', FLEET],
  ] as const) {
    it(`lets ${label} list another tenant's agents and audits it`, async () => {
      const response = await call('agents.list', {}, scopes, { filter: { tenant_ids: ['t2', 't3'] } });
      expect(response.statusCode).toBe(200);
      expect(h.rpc.last?.body).toMatchObject({ filter: { tenant_ids: ['t2', 't3'] } });
      expect(audits().map((event) => event.payload)).toEqual([
        {
          Actor: { tenant: 't1', user: 'u1', session: 's1' },
          Requester: { tenant: 't1', user: 'u1', session: 's1' },
          Impersonating: { tenant: 't2,t3', user: '*', session: '*' },
          Reason: `filter.tenant_ids crossed under ${label}`,
          Method: 'agents.list',
        },
      ]);
    });

    it(`lets ${label} list every tenant's agents and audits it as tenant *`, async () => {
      const response = await call('agents.list', {}, scopes, { filter: { all_tenants: true } });
      expect(response.statusCode).toBe(200);
      expect(audits().map((event) => event.payload)).toMatchObject([
        {
          Impersonating: { tenant: '*', user: '*', session: '*' },
          Reason: `filter.all_tenants crossed under ${label}`,
        },
      ]);
    });
  }

  for (const [label, filter] of [
    ['another tenant', { tenant_ids: ['t2'] }],
    ['more than one tenant', { tenant_ids: ['t1', 't2'] }],
    ['every tenant', { all_tenants: true }],
  ] as const) {
    it(`refuses agents.list naming ${label} without a claim as 403 scope_mismatch, unaudited`, async () => {
      const response = await call('agents.list', {}, NONE, { filter });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 'scope_mismatch' });
      expect(h.rpc.calls).toHaveLength(0);
      expect(audits()).toHaveLength(0);
    });
  }

  it("lets agents.list name only the caller's own tenant without a claim, unaudited", async () => {
    const response = await call('agents.list', {}, NONE, { filter: { tenant_ids: ['t1'] } });
    expect(response.statusCode).toBe(200);
    expect(audits()).toHaveLength(0);
  });

  it('refuses all_tenants with tenant_ids as 400 invalid_request for a claim holder', async () => {
    const response = await call('agents.list', {}, FLEET, { filter: { all_tenants: true, tenant_ids: ['t2'] } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'invalid_request' });
    expect(h.rpc.calls).toHaveLength(0);
  });
});

describe('cross-tenant surfaces: search filters', () => {
  const SEARCHES = ['search.artifacts', 'search.sessions', 'search.tasks'];
  const FILTERS: ReadonlyArray<readonly [string, Record<string, string[]>]> = [
    ['another tenant', { tenant_ids: ['t2'] }],
    ['another user', { user_ids: ['u2'] }],
    ['more than one tenant', { tenant_ids: ['t1', 't2'] }],
    ['more than one session', { session_ids: ['s1', 's2'] }],
  ];

  for (const name of SEARCHES) {
    for (const [label, filter] of FILTERS) {
      it(`refuses ${name} naming ${label} without a claim as 403 scope_mismatch`, async () => {
        const response = await call(name, {}, NONE, { filter });
        expect(response.statusCode).toBe(403);
        expect(response.json()).toMatchObject({ code: 'scope_mismatch' });
        expect(h.rpc.calls).toHaveLength(0);
      });
    }

    it(`lets ${name} name another tenant with console:fleet and audits it`, async () => {
      const response = await call(name, {}, FLEET, { filter: { tenant_ids: ['t2'] } });
      expect(response.statusCode).toBe(200);
      expect(audits()).toHaveLength(1);
      expect(audits()[0]?.payload).toMatchObject({ Method: name, Impersonating: { tenant: 't2', user: 'u1' } });
    });

    it(`lets ${name} filter on one session without a claim`, async () => {
      const response = await call(name, {}, NONE, { filter: { session_ids: ['s9'] } });
      expect(response.statusCode).toBe(200);
      expect(audits()).toHaveLength(0);
    });
  }

  it('lets an own-data search through without a claim', async () => {
    const response = await call('search.tasks', {}, NONE);
    expect(response.statusCode).toBe(200);
  });
});

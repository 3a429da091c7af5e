import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { routeOf } from './support/bodies.ts';
import { createHarness, scoped } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h.close();
});

beforeEach(() => {
  h.rpc.calls.length = 0;
});

async function forwarded(method: string, identity: Record<string, string>, scopes: string[] = []) {
  const extra = method === 'artifacts.get' ? { artifact_id: 'a-1' } : {};
  const response = await h.post(routeOf(method), { identity, ...extra }, { token: h.token(scoped(...scopes)) });
  expect(response.statusCode, response.body).toBe(200);
  return h.rpc.last?.body.identity;
}

describe('artifacts.list: the body user is forwarded as the caller sent it', () => {
  it('forwards an omitted user as omitted, with tenant and session filled', async () => {
    expect(await forwarded('artifacts.list', {})).toEqual({ tenant: 't1', session: 's1' });
  });

  it('forwards an omitted user as omitted for an admin, so that the owner fans across the tenant', async () => {
    expect(await forwarded('artifacts.list', {}, ['admin'])).toEqual({ tenant: 't1', session: 's1' });
  });

  it('forwards the caller naming itself as named', async () => {
    expect(await forwarded('artifacts.list', { user: 'u1' })).toEqual({ tenant: 't1', user: 'u1', session: 's1' });
  });

  it('forwards another user named under console:fleet', async () => {
    expect(await forwarded('artifacts.list', { user: 'u2' }, ['console:fleet'])).toEqual({
      tenant: 't1',
      user: 'u2',
      session: 's1',
    });
  });

  it('keeps the backfilled tenant of a crossing and the run member', async () => {
    expect(await forwarded('artifacts.list', { tenant: 't2', run: 'r1' }, ['admin'])).toEqual({
      tenant: 't2',
      session: 's1',
      run: 'r1',
    });
  });

  it('still backfills the user of every other method', async () => {
    expect(await forwarded('artifacts.get', {})).toEqual({ tenant: 't1', user: 'u1', session: 's1' });
  });
});

describe('artifacts.list: a tenant-wide fan-in is audited', () => {
  const audits = () => h.events.published.filter((e) => e.type === 'audit.admin_scope_used');

  it('publishes audit.admin_scope_used when a claim holder omits the user', async () => {
    h.events.published.length = 0;
    await forwarded('artifacts.list', {}, ['console:fleet']);
    expect(audits()).toHaveLength(1);
    expect(audits()[0]?.payload).toMatchObject({
      Method: 'artifacts.list',
      Impersonating: { tenant: 't1', user: '*', session: 's1' },
    });
  });

  it('publishes nothing when a caller without a claim omits the user', async () => {
    h.events.published.length = 0;
    await forwarded('artifacts.list', {});
    expect(audits()).toHaveLength(0);
  });
});

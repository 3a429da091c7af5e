import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methodsOfService } from '@ars/contracts';
import { ADMIN_BODIES, PER_USER_BODIES, SESSION_USER_BODIES } from './helpers/bodies.ts';
import { startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

const table = (bodies: Readonly<Record<string, Record<string, unknown>>>) => Object.entries(bodies);

describe('agent_config authority', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('authority');
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('covers all 34 agent_config methods, every one implemented', async () => {
    const names = [...Object.keys(ADMIN_BODIES), ...Object.keys(SESSION_USER_BODIES), ...Object.keys(PER_USER_BODIES)];
    const registry = methodsOfService('agent-registry')
      .map((m) => m.name)
      .filter((n) => n.startsWith('agent_config.'));
    expect(names.sort()).toEqual(registry.sort());
    expect(names).toHaveLength(34);
    const outcomes = await Promise.all(names.map((m) => h.outcome(m, {}, h.caller())));
    expect(outcomes.filter((o) => !o.ok && o.code === 'unimplemented')).toEqual([]);
  });

  describe('admin tier', () => {
    it.each(table(ADMIN_BODIES))('%s refuses a scopeless caller with identity_scope_required', async (method, body) => {
      expect(await h.outcome(method, body, h.caller([]))).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it.each(table(ADMIN_BODIES))(
      '%s refuses a console:fleet caller with identity_scope_required',
      async (method, body) => {
        expect(await h.outcome(method, body, h.caller(['console:fleet']))).toMatchObject({
          ok: false,
          code: 'identity_scope_required',
        });
      },
    );

    it.each(table(ADMIN_BODIES))('%s refuses an agent_config:user caller without admin', async (method, body) => {
      expect(await h.outcome(method, body, h.caller(['agent_config:user']))).toMatchObject({
        ok: false,
        code: 'identity_scope_required',
      });
    });
  });

  describe('per-user variant tier', () => {
    it.each(table(PER_USER_BODIES))('%s refuses admin without the agent_config:user claim', async (method, body) => {
      expect(await h.outcome(method, body, h.caller(['admin', 'console:fleet']))).toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
    });

    it.each(table(PER_USER_BODIES))('%s refuses a scopeless caller with scope_mismatch', async (method, body) => {
      expect(await h.outcome(method, body, h.caller([]))).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it('accepts the agent_config:user claim without admin', async () => {
      const user = h.caller(['agent_config:user']);
      await expect(h.call('agent_config.user.list_revisions', { agent_id: 'default' }, user)).resolves.toEqual({
        items: [],
      });
    });
  });

  describe('session-user tier', () => {
    it.each(table(SESSION_USER_BODIES))('%s needs no claim', async (method, body) => {
      expect(await h.outcome(method, body, h.caller([]))).toMatchObject({ ok: true });
    });
  });

  describe('every tier', () => {
    const all = [...table(ADMIN_BODIES), ...table(SESSION_USER_BODIES), ...table(PER_USER_BODIES)];
    const everyScope = ['admin', 'console:fleet', 'agent_config:user'];

    it.each(all)('%s refuses a body naming another tenant with identity_required', async (method, body) => {
      const outcome = await h.outcome(method, { ...body, identity: { tenant: 'elsewhere' } }, h.caller(everyScope));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    });

    it.each(all)('%s refuses a body naming another user with identity_required', async (method, body) => {
      const outcome = await h.outcome(method, { ...body, identity: { user: 'mallory' } }, h.caller(everyScope));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    });

    it.each(all)('%s accepts the body repeating the verified identity', async (method, body) => {
      const caller = h.caller(everyScope);
      const identity = { tenant: caller.tenant, user: caller.user, session: caller.session };
      const outcome = await h.outcome(method, { ...body, identity }, caller);
      expect(outcome.ok || !['identity_required', 'identity_scope_required'].includes(outcome.code)).toBe(true);
    });

    it.each(all)('%s refuses an unknown member with invalid_request', async (method, body) => {
      const outcome = await h.outcome(method, { ...body, surprise: 1 }, h.caller(everyScope));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });
});

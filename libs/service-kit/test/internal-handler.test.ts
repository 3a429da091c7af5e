import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  GOVERNANCE_RECORD_TOKEN_ROTATION,
  MEMORY_ERASE_SESSION,
  OAUTH_COMPLETE,
  SESSION_ADMIT,
  defineInternalEndpoint,
} from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { buildInternalTable, serveInternal } from '../src/internal-handler.ts';

const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };
const admit = serveInternal(SESSION_ADMIT, async ({ body }) => ({
  state: 'open' as const,
  reuse_ms: body.tenant.length,
}));

describe('serveInternal', () => {
  it('refuses a body that fails the request schema as invalid_request, before the handler', async () => {
    const call = { method: SESSION_ADMIT.name, identity: caller, body: { tenant: 't', user: 'u', session: 's', x: 1 } };
    await expect(admit.handler(call)).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'invalid _session.admit request: x: unknown member',
    });
  });

  it('hands the handler the parsed body', async () => {
    const call = { method: SESSION_ADMIT.name, identity: caller, body: { tenant: 'abc', user: 'u', session: 's' } };
    await expect(admit.handler(call)).resolves.toEqual({ state: 'open', reuse_ms: 3 });
  });

  it('checks an admin gate before the body is read', async () => {
    let ran = false;
    const bound = serveInternal(GOVERNANCE_RECORD_TOKEN_ROTATION, async () => {
      ran = true;
      throw new Error('unreachable');
    });
    const call = { method: GOVERNANCE_RECORD_TOKEN_ROTATION.name, identity: caller, body: 'garbage' };
    await expect(bound.handler(call)).rejects.toMatchObject({ code: 'identity_scope_required' });
    await expect(bound.handler({ ...call, identity: { ...caller, scopes: ['admin'] } })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(ran).toBe(false);
  });

  it('runs a service gate without an identity check, handing the handler an identity that grants nothing', async () => {
    let seen: VerifiedIdentity | undefined;
    const bound = serveInternal(OAUTH_COMPLETE, async ({ identity }) => {
      seen = identity;
      return { outcome: 'denied' as const, server_id: 's', binding_id: 'b', task_id: 't', run_notified: false };
    });
    const forged = { tenant: 'other', user: 'mallory', session: 's', scopes: ['admin'] };
    await bound.handler({
      method: OAUTH_COMPLETE.name,
      identity: forged,
      body: { state: 'x', error: 'access_denied' },
    });
    expect(seen).toEqual({ tenant: '_system', user: 'agent-registry', session: '_service', scopes: [] });
  });
});

describe('buildInternalTable', () => {
  it('serves the endpoints a service owns, by name', () => {
    expect(Object.keys(buildInternalTable('session', [admit]))).toEqual(['_session.admit']);
  });

  it('refuses at boot an endpoint another service owns, one outside the registry, or one bound twice', () => {
    const erase = serveInternal(MEMORY_ERASE_SESSION, async () => ({
      purged: false,
      items_deleted: 0,
      traces_deleted: 0,
    }));
    expect(() => buildInternalTable('session', [erase])).toThrow(
      'session serves _memory.erase_session, which memory owns',
    );
    const stray = defineInternalEndpoint({
      name: '_session.stray',
      service: 'session',
      callers: ['gateway'],
      gate: 'caller',
      request: z.strictObject({}),
      reply: z.object({}),
      refusals: {},
      summary: 'not in the registry',
    });
    expect(() => buildInternalTable('session', [serveInternal(stray, async () => ({}))])).toThrow(
      'is not the registry',
    );
    expect(() => buildInternalTable('session', [admit, admit])).toThrow('twice');
  });
});

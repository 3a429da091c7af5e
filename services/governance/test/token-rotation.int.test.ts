import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv, REVOCATIONS_BUCKET } from '@ars/bus';
import type { Harness } from './support/harness.ts';
import { identityOf, startHarness, uniqueTenant } from './support/harness.ts';

const RECORD = '_governance.record_token_rotation';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A record body; `oldId` null: the revoked token has no jti. */
function rotation(oldToken: string, newToken: string, oldId: string | null = `jti-${randomUUID()}`) {
  return {
    revoked: {
      ...(oldId === null ? {} : { token_id: oldId }),
      fingerprint: `sha256:${sha256(oldToken)}`,
      expires_at: '2030-01-01T00:00:00Z',
    },
    issued: { token_id: `jti-${randomUUID()}`, fingerprint: sha256(newToken), expires_at: '2030-01-01T01:00:00Z' },
  };
}

describe('token rotation records', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  const readKv = async (key: string) => {
    const kv = await openKv(h.service.bus, REVOCATIONS_BUCKET);
    const entry = await kv.get(key);
    return entry === null || entry.operation !== 'PUT' ? undefined : (entry.json() as Record<string, unknown>);
  };

  it('writes the revoked token to ars_revocations under its fingerprint and its id', async () => {
    const admin = identityOf(uniqueTenant(), ['admin'], 'admin');
    const oldToken = `eyJold.${randomUUID()}.sig`;
    const body = rotation(oldToken, `eyJnew.${randomUUID()}.sig`, 'old/id+1');
    const result = (await h.call(RECORD, body, admin)) as Record<string, unknown>;
    const hex = sha256(oldToken);
    expect(result).toMatchObject({
      rotation_id: expect.any(String),
      revoked_token_id: 'old/id+1',
      revoked_fingerprint: `sha256:${hex.slice(0, 16)}`,
      issued_token_id: body.issued.token_id,
      revocation_keys: [`fp.${hex}`, 'jti.b2xkL2lkKzE'],
      created: true,
    });
    const expected = {
      reason: 'rotated',
      expires_at: '2030-01-01T00:00:00Z',
      tenant: admin.tenant,
      user: 'admin',
      rotation_id: result.rotation_id,
      replaced_by: body.issued.token_id,
      revoked_at: result.rotated_at,
    };
    expect(await readKv(`fp.${hex}`)).toEqual(expected);
    expect(await readKv('jti.b2xkL2lkKzE')).toEqual(expected);
  });

  it('publishes a redacted audit.admin_scope_used (shape 2) naming auth.rotate_token', async () => {
    const admin = identityOf(uniqueTenant(), ['admin'], 'admin');
    const oldToken = `eyJold.${randomUUID()}.sig`;
    const body = rotation(oldToken, `eyJnew.${randomUUID()}.sig`, 'jti-audited');
    await h.call(RECORD, body, admin);
    const event = await h.waitForEvent(
      (e) => e.type === 'audit.admin_scope_used' && e.tenant === admin.tenant,
      'audit.admin_scope_used',
    );
    const caller = { tenant: admin.tenant, user: 'admin', session: 's-1' };
    expect(event.payload).toEqual({
      Actor: caller,
      Requester: caller,
      Impersonating: caller,
      Reason: `token rotated under admin: revoked jti-audited, issued ${body.issued.token_id}`,
      Method: 'auth.rotate_token',
    });
    const raw = h.rawEvents.find((r) => r.includes(body.issued.token_id)) ?? '';
    expect(raw).not.toContain(oldToken);
    expect(raw).not.toContain(sha256(oldToken));
    expect(h.logs.some((l) => l.includes(oldToken) || l.includes(sha256(oldToken)))).toBe(false);
  });

  it('keys a token without an id by its fingerprint only', async () => {
    const admin = identityOf(uniqueTenant(), ['admin']);
    const oldToken = `opaque-${randomUUID()}`;
    const result = (await h.call(RECORD, rotation(oldToken, `next-${randomUUID()}`, null), admin)) as {
      revocation_keys: string[];
      revoked_fingerprint: string;
    };
    expect(result.revocation_keys).toEqual([`fp.${sha256(oldToken)}`]);
    const event = await h.waitForEvent(
      (e) => e.type === 'audit.admin_scope_used' && e.tenant === admin.tenant,
      'audit.admin_scope_used',
    );
    expect(event.payload.Reason).toContain(`revoked ${result.revoked_fingerprint}`);
  });

  it('answers a retry with the same record and the same audit event id', async () => {
    const admin = identityOf(uniqueTenant(), ['admin']);
    const body = rotation(`old-${randomUUID()}`, `new-${randomUUID()}`);
    const first = (await h.call(RECORD, body, admin)) as Record<string, unknown>;
    const second = (await h.call(RECORD, body, admin)) as Record<string, unknown>;
    expect(second).toEqual({ ...first, created: false });
    await h.waitForEvent(
      (e) =>
        e.type === 'audit.admin_scope_used' &&
        e.tenant === admin.tenant &&
        h.events.filter((x) => x.tenant === admin.tenant).length >= 2,
      'both audit publishes',
    );
    const ids = h.events.filter((e) => e.tenant === admin.tenant).map((e) => e.id);
    expect(new Set(ids).size).toBe(1);
  });

  it('refuses a second rotation of the same token as conflict', async () => {
    const admin = identityOf(uniqueTenant(), ['admin']);
    const oldToken = `old-${randomUUID()}`;
    await h.call(RECORD, rotation(oldToken, `new-${randomUUID()}`), admin);
    const outcome = await h.outcome(RECORD, rotation(oldToken, `other-${randomUUID()}`), admin);
    expect(outcome).toMatchObject({ ok: false, code: 'conflict' });
  });

  it.each([
    ['a scopeless token', []],
    ['console:fleet', ['console:fleet']],
  ])('refuses %s', async (_label, scopes) => {
    const outcome = await h.outcome(RECORD, rotation('a', 'b'), identityOf(uniqueTenant(), scopes));
    expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
  });

  it.each([
    [
      'a malformed fingerprint',
      { ...rotation('a', 'b'), revoked: { fingerprint: 'abc', expires_at: '2030-01-01T00:00:00Z' } },
    ],
    ['the same token issued as revoked', rotation('same', 'same')],
    ['an unknown member', { ...rotation('a', 'b'), token: 'eyJ...' }],
    ['a missing expiry', { ...rotation('a', 'b'), issued: { token_id: 'x', fingerprint: sha256('b') } }],
  ])('refuses a record with %s', async (_label, body) => {
    const outcome = await h.outcome(RECORD, body, identityOf(uniqueTenant(), ['admin']));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('leaves auth.rotate_token itself to the gateway, which holds the signing keys', async () => {
    const outcome = await h.outcome('auth.rotate_token', { identity: {} }, identityOf(uniqueTenant(), ['admin']));
    expect(outcome).toMatchObject({ ok: false, code: 'unimplemented' });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheVerifications, createDevIssuer, createTokenVerifier, tokenFingerprint } from '@ars/auth';
import type { DevIssuer } from '@ars/auth';
import { ServiceError } from '@ars/contracts';
import { routeByKid } from '../src/auth/verifier-router.ts';
import type { TokenVerifier } from '../src/ports.ts';
import { routeOf } from './support/bodies.ts';
import { createHarness, openEventStream } from './support/harness.ts';
import type { Harness, RecordedCall } from './support/harness.ts';
import { SseReader } from './support/sse-reader.ts';
import { AUDIENCE, ISSUER } from './support/tokens.ts';

const ROTATE = routeOf('auth.rotate_token');
const TASKS_LIST = routeOf('tasks.list');
const RECORD = '_governance.record_token_rotation';

let h: Harness;
let issuer: DevIssuer;
let verifications = 0;

/** Verifies the harness's "identity provider" tokens and the rotation issuer's, cached like the real gateway. */
function verifierFor(holder: { h?: Harness }): TokenVerifier {
  let routed: TokenVerifier | undefined;
  return cacheVerifications({
    verify: async (token) => {
      verifications += 1;
      routed ??= routeByKid(
        createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: [holder.h!.key.jwk as never] }),
        { kid: issuer.kid, verifier: issuer.verifier },
      );
      return routed.verify(token);
    },
  });
}

function recorded(): RecordedCall[] {
  return h.rpc.calls.filter((call) => call.method === RECORD);
}

function adminToken(extra: Record<string, unknown> = {}): string {
  return h.token({ scopes: ['admin'], jti: 'old-jti', ...extra });
}

async function rotate(token: string, body: Record<string, unknown> = { identity: {} }) {
  return h.post(ROTATE, body, { token });
}

beforeEach(async () => {
  issuer = await createDevIssuer({ issuer: 'ars-gateway', audience: AUDIENCE });
  verifications = 0;
  const holder: { h?: Harness } = {};
  h = await createHarness({ verifier: verifierFor(holder), tokenMinter: issuer });
  holder.h = h;
  h.rpc.respond = async (call) => {
    if (call.method === RECORD) {
      return {
        rotation_id: 'rot-1',
        revoked_fingerprint: 'sha256:0123456789abcdef',
        issued_token_id: 'new-jti',
        rotated_at: '2030-01-01T00:00:00.000Z',
        revocation_keys: [],
        created: true,
      };
    }
    return { items: [] };
  };
});

afterEach(async () => {
  await h.close();
});

describe('auth.rotate_token', () => {
  it('needs the admin claim (403 identity_scope_required) and mints nothing without it', async () => {
    const response = await rotate(h.token({ scopes: [] }));
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'identity_scope_required' });
    expect(h.rpc.calls).toEqual([]);
  });

  it('answers 501 naming the missing signing key when the gateway cannot mint tokens', async () => {
    const bare = await createHarness();
    try {
      const response = await bare.post(ROTATE, { identity: {} }, { token: bare.token({ scopes: ['admin'] }) });
      expect(response.statusCode).toBe(501);
      expect(response.json()).toMatchObject({ code: 'unimplemented' });
      expect(response.json().message).toContain('ARS_ROTATION_SIGNING_KEY_FILE');
    } finally {
      await bare.close();
    }
  });

  it('records the rotation with governance: old jti, fingerprint and expiry; the new token id', async () => {
    const old = adminToken();
    const response = await rotate(old);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    const exp = JSON.parse(Buffer.from(old.split('.')[1]!, 'base64url').toString()).exp as number;
    expect(recorded()).toHaveLength(1);
    expect(recorded()[0]).toMatchObject({
      service: 'governance',
      identity: { tenant: 't1', user: 'u1', session: 's1', scopes: ['admin'] },
      body: {
        revoked: {
          token_id: 'old-jti',
          fingerprint: tokenFingerprint(old),
          expires_at: new Date(exp * 1000).toISOString(),
        },
        issued: { token_id: body.token_id, fingerprint: tokenFingerprint(body.token), expires_at: body.expires_at },
      },
    });
  });

  it('reveals {token, token_id, expires_at, revoked_token_id}, not to be cached', async () => {
    const response = await rotate(adminToken());
    expect(Object.keys(response.json()).sort()).toEqual(['expires_at', 'revoked_token_id', 'token', 'token_id']);
    expect(response.json()).toMatchObject({ revoked_token_id: 'old-jti' });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('mints the replacement for the same tenant, user, session claim and scopes, with a fresh jti', async () => {
    const response = await rotate(adminToken({ scopes: ['admin', 'console:fleet'] }));
    const { token, token_id: tokenId } = response.json();
    await expect(issuer.verifier.verify(token)).resolves.toMatchObject({
      tenant: 't1',
      user: 'u1',
      session: 's1',
      scopes: ['admin', 'console:fleet'],
      jti: tokenId,
    });
    expect(tokenId).not.toBe('old-jti');
  });

  it('gives the replacement ttl_seconds of life (default one hour)', async () => {
    const before = Date.now();
    const short = (await rotate(adminToken({ jti: 'a' }), { identity: {}, ttl_seconds: 120 })).json();
    const standard = (await rotate(adminToken({ jti: 'b' }))).json();
    expect(Date.parse(short.expires_at) - before).toBeLessThanOrEqual(121_000);
    expect(Date.parse(short.expires_at) - before).toBeGreaterThan(100_000);
    expect(Date.parse(standard.expires_at) - before).toBeGreaterThan(3_500_000);
  });

  it('refuses a ttl_seconds outside its bounds with 400 and mints nothing', async () => {
    const response = await rotate(adminToken(), { identity: {}, ttl_seconds: 5 });
    expect(response.statusCode).toBe(400);
    expect(recorded()).toEqual([]);
  });

  it('refuses the rotated token at once with 401 auth_rejected', async () => {
    const old = adminToken();
    await rotate(old);
    const response = await h.post(TASKS_LIST, { identity: {} }, { token: old });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'auth_rejected' });
    expect(response.json().message).toMatch(/^revoked: /);
  });

  it('refuses the rotated token even though its verification is cached', async () => {
    const old = adminToken();
    await h.post(TASKS_LIST, { identity: {} }, { token: old });
    await rotate(old);
    const before = verifications;
    const response = await h.post(TASKS_LIST, { identity: {} }, { token: old });
    expect(verifications).toBe(before);
    expect(response.statusCode).toBe(401);
  });

  it('accepts the replacement token', async () => {
    const { token } = (await rotate(adminToken())).json();
    const response = await h.post(TASKS_LIST, { identity: {} }, { token });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('publishes auth.rejected (Reason revoked, KID, Issuer, Subject) under the token owner, once per token', async () => {
    const old = adminToken();
    await rotate(old);
    await h.post(TASKS_LIST, { identity: {} }, { token: old, session: 's9' });
    await h.post(TASKS_LIST, { identity: {} }, { token: old });
    const rejected = h.events.published.filter((event) => event.type === 'auth.rejected');
    expect(rejected).toEqual([
      {
        type: 'auth.rejected',
        identity: { tenant: 't1', user: 'u1', session: 's9', run: '' },
        payload: { Reason: 'revoked', KID: h.key.kid, Issuer: ISSUER, Subject: '' },
      },
    ]);
  });

  it('revokes a token without jti by its fingerprint and names no revoked id', async () => {
    const old = adminToken({ jti: undefined });
    const response = await rotate(old);
    expect(response.json()).not.toHaveProperty('revoked_token_id');
    expect(recorded()[0]?.body.revoked).toEqual({
      fingerprint: tokenFingerprint(old),
      expires_at: expect.any(String),
    });
    expect((await h.post(TASKS_LIST, { identity: {} }, { token: old })).statusCode).toBe(401);
  });

  it('reveals nothing and keeps the token working when governance cannot record the rotation', async () => {
    h.rpc.respond = async (call) => {
      if (call.method === RECORD) throw new ServiceError('unavailable', 'service governance is not available');
      return { items: [] };
    };
    const old = adminToken();
    const response = await rotate(old);
    expect(response.statusCode).toBe(503);
    expect(response.body).not.toContain('token_id');
    expect((await h.post(TASKS_LIST, { identity: {} }, { token: old })).statusCode).toBe(200);
  });

  it('passes on governance’s 409 conflict (rotated already elsewhere) without revealing a token', async () => {
    h.rpc.respond = async () => {
      throw new ServiceError('conflict', 'this token was rotated already; the new token must not be revealed');
    };
    const response = await rotate(adminToken());
    expect(response.statusCode).toBe(409);
    expect(response.body).not.toContain('"token"');
  });

  it('refuses a second rotation of the same token (it is revoked)', async () => {
    const old = adminToken();
    await rotate(old);
    expect((await rotate(old)).statusCode).toBe(401);
    expect(recorded()).toHaveLength(1);
  });

  it('refuses the rotated token on GET /v1/events', async () => {
    const old = adminToken();
    await rotate(old);
    const { response } = await openEventStream(h, { token: old });
    expect(response.statusCode).toBe(401);
  });

  it('ends an event stream opened with the token when the token is rotated', async () => {
    const old = adminToken();
    const { response, abort } = await openEventStream(h, { token: old });
    try {
      const reader = new SseReader(response.stream());
      await reader.until((r) => r.named('replay.complete').length > 0);
      await rotate(old);
      await reader.waitEnd();
    } finally {
      abort.abort();
    }
  });
});

describe('routeByKid', () => {
  it('sends the rotation key’s tokens to its verifier and every other token to the provider', async () => {
    const own = await createDevIssuer();
    const provider = { verify: async () => ({ tenant: 'idp', user: 'u', scopes: [] }) };
    const router = routeByKid(provider, { kid: own.kid, verifier: own.verifier });
    await expect(router.verify(await own.mint({ tenant: 'gw', user: 'u' }))).resolves.toMatchObject({ tenant: 'gw' });
    await expect(router.verify('e30.e30.sig')).resolves.toMatchObject({ tenant: 'idp' });
    await expect(router.verify('garbage')).resolves.toMatchObject({ tenant: 'idp' });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '@ars/auth';
import type { KeyResolver } from '@ars/auth';
import { bodyFor, routeOf } from './support/bodies.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import { AUDIENCE, ISSUER, claims, es256Key, hs256Token, noneToken, rs256Key, signToken } from './support/tokens.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
});

afterEach(async () => {
  await h.close();
});

/** A forwarded read: tasks.list travels to run-executor with the verified identity. */
const callTasksList = (options: Parameters<Harness['post']>[2] = {}) =>
  h.post(routeOf('tasks.list'), bodyFor('tasks.list'), options);

describe('authentication: the two-part model', () => {
  it('takes the session from X-Service-Session over the token session claim', async () => {
    const response = await callTasksList({ session: 'conversation-9' });
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.identity).toMatchObject({ tenant: 't1', user: 'u1', session: 'conversation-9' });
  });

  it('defaults to the token session claim when the header is absent', async () => {
    await callTasksList();
    expect(h.rpc.last?.identity).toMatchObject({ tenant: 't1', user: 'u1', session: 's1' });
  });

  it('treats an empty X-Service-Session header as absent', async () => {
    await callTasksList({ headers: { 'x-service-session': '' } });
    expect(h.rpc.last?.identity.session).toBe('s1');
  });

  it('answers 401 identity_required when neither the header nor the token names a session', async () => {
    const response = await callTasksList({ token: h.token({ session: undefined }) });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'identity_required' });
    expect(h.rpc.calls).toHaveLength(0);
  });

  it('accepts a token without a session claim when the header names one', async () => {
    const response = await callTasksList({ token: h.token({ session: undefined }), session: 'from-header' });
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.identity.session).toBe('from-header');
  });

  it('answers 401 identity_required when no bearer token is sent', async () => {
    const response = await callTasksList({ token: null });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'identity_required' });
  });

  it('answers 401 identity_required for an Authorization header that is not a bearer token', async () => {
    const response = await callTasksList({ token: null, headers: { authorization: 'Basic dTpw' } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'identity_required' });
  });

  it('never lets a header set the tenant or the user', async () => {
    await callTasksList({ headers: { 'x-service-tenant': 'other', 'x-service-user': 'mallory' } });
    expect(h.rpc.last?.identity).toMatchObject({ tenant: 't1', user: 'u1' });
  });

  it('serves many sessions under one token, each forwarded with its own triple', async () => {
    const token = h.token();
    await callTasksList({ token, session: 'a' });
    await callTasksList({ token, session: 'b' });
    expect(h.rpc.calls.map((call) => call.identity.session)).toEqual(['a', 'b']);
    expect(h.rpc.calls.map((call) => call.body.identity)).toEqual([
      { tenant: 't1', user: 'u1', session: 'a' },
      { tenant: 't1', user: 'u1', session: 'b' },
    ]);
  });

  it('forwards the token scopes with the identity', async () => {
    await callTasksList({ token: h.token({ scopes: ['console:fleet'] }) });
    expect(h.rpc.last?.identity.scopes).toEqual(['console:fleet']);
  });
});

describe('authentication: the token', () => {
  const rejected = async (token: string) => {
    const response = await callTasksList({ token });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'auth_rejected' });
    expect(h.rpc.calls).toHaveLength(0);
  };

  it('accepts an ES256 token from the configured issuer and audience', async () => {
    expect((await callTasksList()).statusCode).toBe(200);
  });

  it('refuses an HS256 token with 401 auth_rejected', async () => {
    await rejected(hs256Token(h.key.kid));
  });

  it('refuses an alg none token with 401 auth_rejected', async () => {
    await rejected(noneToken(h.key.kid));
  });

  it('refuses an expired token', async () => {
    await rejected(h.token({ exp: Math.floor(Date.now() / 1000) - 600 }));
  });

  it('refuses a token that is not valid yet', async () => {
    await rejected(h.token({ nbf: Math.floor(Date.now() / 1000) + 600 }));
  });

  it('refuses a token for another audience', async () => {
    await rejected(h.token({ aud: 'someone-else' }));
  });

  it('refuses a token from another issuer', async () => {
    await rejected(h.token({ iss: 'https://evil.test' }));
  });

  it('refuses a token signed by another key under a trusted kid', async () => {
    const forged = { ...es256Key(h.key.kid) };
    await rejected(signToken(forged, claims()));
  });

  it('refuses a token whose kid is unknown', async () => {
    await rejected(signToken(es256Key('unknown-kid'), claims()));
  });

  it('refuses a malformed token', async () => {
    await rejected('not-a-jwt');
  });

  it('refuses HS256 and none before any key lookup', async () => {
    let lookups = 0;
    const key = h.key;
    const resolver: KeyResolver = async () => {
      lookups += 1;
      throw new Error('no key');
    };
    await h.close();
    h = await createHarness({
      verifier: createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keyResolver: resolver }),
    });
    for (const token of [hs256Token(key.kid), noneToken(key.kid)]) {
      const response = await callTasksList({ token });
      expect(response.json()).toMatchObject({ code: 'auth_rejected' });
    }
    expect(lookups).toBe(0);
  });

  it('accepts RS256 when the key set holds an RSA key', async () => {
    const rsa = rs256Key();
    await h.close();
    h = await createHarness({
      verifier: createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: [rsa.jwk as never] }),
    });
    expect((await callTasksList({ token: signToken(rsa, claims()) })).statusCode).toBe(200);
  });
});

describe('authentication: body identity reconciliation', () => {
  it('backfills an empty identity from the verified identity', async () => {
    await callTasksList();
    expect(h.rpc.last?.body.identity).toEqual({ tenant: 't1', user: 'u1', session: 's1' });
  });

  it('keeps run and scope, which are independent of the token', async () => {
    await h.post(routeOf('cancel'), bodyFor('cancel', { run: 'task-7', scope: 'admin' }));
    expect(h.rpc.last?.body.identity).toEqual({
      tenant: 't1',
      user: 'u1',
      session: 's1',
      run: 'task-7',
      scope: 'admin',
    });
  });

  it('accepts a body identity equal to the verified one', async () => {
    const response = await h.post(
      routeOf('tasks.list'),
      bodyFor('tasks.list', { tenant: 't1', user: 'u1', session: 's1' }),
    );
    expect(response.statusCode).toBe(200);
  });

  it('compares the body session with the header session, not the claim', async () => {
    const body = bodyFor('tasks.list', { session: 'from-header' });
    expect((await h.post(routeOf('tasks.list'), body, { session: 'from-header' })).statusCode).toBe(200);
    expect((await h.post(routeOf('tasks.list'), body)).json()).toMatchObject({ code: 'identity_required' });
  });

  it.each([
    ['user', { user: 'u2' }],
    ['session', { session: 's2' }],
    ['tenant', { tenant: 't2' }],
  ])('answers 401 identity_required when the body %s contradicts the verified identity', async (_name, identity) => {
    const response = await h.post(routeOf('tasks.list'), bodyFor('tasks.list', identity), {
      token: h.token({ scopes: ['admin', 'console:fleet'] }),
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'identity_required' });
    expect(h.rpc.calls).toHaveLength(0);
  });

  it('lets state.history cross user and session with admin', async () => {
    const body = bodyFor('state.history', { tenant: 't2', user: 'u2', session: 's2' });
    const response = await h.post(routeOf('state.history'), body, { token: h.token({ scopes: ['admin'] }) });
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.body.identity).toEqual({ tenant: 't2', user: 'u2', session: 's2' });
  });

  it.each([
    ['no claim', []],
    ['console:fleet', ['console:fleet']],
  ])('answers state.history crossing with %s as 404 not_found', async (_name, scopes) => {
    const body = bodyFor('state.history', { session: 'someone-else' });
    const response = await h.post(routeOf('state.history'), body, { token: h.token({ scopes }) });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found' });
  });

  it('refuses sessions.delete of another session even for admin with 401 identity_required', async () => {
    const body = bodyFor('sessions.delete', { session: 'other' });
    const response = await h.post(routeOf('sessions.delete'), body, { token: h.token({ scopes: ['admin'] }) });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'identity_required' });
  });
});

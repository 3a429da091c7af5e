import { describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  DEV_DEFAULT_IDENTITY,
  DEV_TOKEN_TTL_SECONDS,
  authRejectionReason,
  createDevIssuer,
  createTokenVerifier,
} from '../src/index.ts';

describe('createDevIssuer', () => {
  it('mints a token that its own verifier accepts with the requested claims', async () => {
    const dev = await createDevIssuer();
    const token = await dev.mint({ tenant: 't1', user: 'u1', session: 's1', scopes: ['admin'] });
    await expect(dev.verifier.verify(token)).resolves.toMatchObject({
      tenant: 't1',
      user: 'u1',
      session: 's1',
      scopes: ['admin'],
      kid: dev.kid,
      iss: 'ars-dev',
    });
  });

  it('signs with ES256 under the ephemeral key id', async () => {
    const dev = await createDevIssuer();
    const header = decodeProtectedHeader(await dev.mint({ tenant: 't', user: 'u' }));
    expect(header).toMatchObject({ alg: 'ES256', kid: dev.kid });
  });

  it('defaults the issuer to ars-dev and the audience to ars', async () => {
    const dev = await createDevIssuer();
    const payload = decodeJwt(await dev.mint({ tenant: 't', user: 'u' }));
    expect(payload).toMatchObject({ iss: 'ars-dev', aud: 'ars', sub: 'u' });
  });

  it('uses the configured issuer and audience', async () => {
    const dev = await createDevIssuer({ issuer: 'local', audience: 'api' });
    const payload = decodeJwt(await dev.mint({ tenant: 't', user: 'u' }));
    expect(payload).toMatchObject({ iss: 'local', aud: 'api' });
  });

  it('mints tokens valid for twelve hours by default', async () => {
    const dev = await createDevIssuer();
    const payload = decodeJwt(await dev.mint({ tenant: 't', user: 'u' }));
    expect(DEV_TOKEN_TTL_SECONDS).toBe(43_200);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(43_200);
  });

  it('honours a custom ttlSeconds', async () => {
    const dev = await createDevIssuer();
    const payload = decodeJwt(await dev.mint({ tenant: 't', user: 'u', ttlSeconds: 60 }));
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(60);
  });

  it('mints an empty scopes array when no scopes are given', async () => {
    const dev = await createDevIssuer();
    expect(decodeJwt(await dev.mint({ tenant: 't', user: 'u' })).scopes).toEqual([]);
  });

  it('omits the session claim when no session is given', async () => {
    const dev = await createDevIssuer();
    expect(decodeJwt(await dev.mint({ tenant: 't', user: 'u' }))).not.toHaveProperty('session');
  });

  it('publishes only the public half of its key', async () => {
    const dev = await createDevIssuer();
    expect(dev.publicJwks.keys).toHaveLength(1);
    expect(dev.publicJwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: dev.kid, alg: 'ES256' });
    expect(dev.publicJwks.keys[0]).not.toHaveProperty('d');
  });

  it('is verifiable by a token verifier built from its public JWKS', async () => {
    const dev = await createDevIssuer();
    const verifier = createTokenVerifier({ issuer: 'ars-dev', audience: 'ars', keys: dev.publicJwks.keys });
    await expect(verifier.verify(await dev.mint({ tenant: 't', user: 'u' }))).resolves.toMatchObject({ tenant: 't' });
  });

  it('produces tokens that another dev issuer rejects for an unknown kid', async () => {
    const first = await createDevIssuer();
    const second = await createDevIssuer();
    const error = await second.verifier.verify(await first.mint({ tenant: 't', user: 'u' })).catch((e: unknown) => e);
    expect(authRejectionReason(error)).toBe('kid');
  });

  it.each([
    ['an empty tenant', { tenant: '', user: 'u' }],
    ['an empty user', { tenant: 't', user: '' }],
    ['an empty session', { tenant: 't', user: 'u', session: '' }],
    ['a non-positive ttl', { tenant: 't', user: 'u', ttlSeconds: 0 }],
  ])('refuses to mint with %s', async (_name, request) => {
    const dev = await createDevIssuer();
    await expect(dev.mint(request)).rejects.toThrow(TypeError);
  });

  it('defines the default identity as tenant, user and session dev with admin and console:fleet', () => {
    expect(DEV_DEFAULT_IDENTITY).toEqual({
      tenant: 'dev',
      user: 'dev',
      session: 'dev',
      scopes: ['admin', 'console:fleet'],
    });
  });
});

describe('dev issuer token ids', () => {
  it('gives every minted token its own jti, surfaced on the verified claims', async () => {
    const issuer = await createDevIssuer();
    const first = await issuer.verifier.verify(await issuer.mint({ tenant: 't', user: 'u', scopes: [] }));
    const second = await issuer.verifier.verify(await issuer.mint({ tenant: 't', user: 'u', scopes: [] }));
    expect(first.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.jti).not.toBe(first.jti);
    expect(typeof first.exp).toBe('number');
  });
});

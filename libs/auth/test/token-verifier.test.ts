import { beforeAll, describe, expect, it, vi } from 'vitest';
import { customFetch, importJWK } from 'jose';
import type { CryptoKey, JWTPayload } from 'jose';
import { SIGNING_ALGORITHMS, authRejectionReason, createTokenVerifier } from '../src/index.ts';
import type { AuthRejectionReason, KeyResolver, SigningAlgorithm, TokenVerifier } from '../src/index.ts';
import { AUDIENCE, ISSUER, claimsFor, generateTestKey, rawToken, signHmacToken, signToken } from './helpers/tokens.ts';
import type { TestKey } from './helpers/tokens.ts';

const keys = new Map<SigningAlgorithm, TestKey>();
let verifier: TokenVerifier;

beforeAll(async () => {
  for (const alg of SIGNING_ALGORITHMS) keys.set(alg, await generateTestKey(alg));
  verifier = createTokenVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: [...keys.values()].map((k) => k.publicJwk),
  });
});

function key(alg: SigningAlgorithm): TestKey {
  const found = keys.get(alg);
  if (found === undefined) throw new Error(`no test key for ${alg}`);
  return found;
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; reason: AuthRejectionReason | undefined }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code: string }).code, reason: authRejectionReason(error) };
  }
  throw new Error('expected a rejection');
}

async function esKeyResolverSpy(): Promise<ReturnType<typeof vi.fn<KeyResolver>>> {
  const publicKey = (await importJWK(key('ES256').publicJwk, 'ES256')) as CryptoKey;
  return vi.fn<KeyResolver>(async () => publicKey);
}

const NOW = () => Math.floor(Date.now() / 1000);

describe('createTokenVerifier: algorithms', () => {
  it.each(SIGNING_ALGORITHMS)('accepts a %s token signed with a real generated key', async (alg) => {
    const claims = await verifier.verify(await signToken(key(alg)));
    expect(claims).toMatchObject({ tenant: 'acme', user: 'alice', session: 's-1', scopes: ['console:fleet'] });
    expect(claims.kid).toBe(key(alg).kid);
  });

  it.each(['HS256', 'HS384', 'HS512'] as const)('refuses an %s token before any key lookup', async (alg) => {
    const resolver = await esKeyResolverSpy();
    const strict = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keyResolver: resolver });
    expect(await rejection(strict.verify(await signHmacToken(alg, 'kid-es256')))).toEqual({
      code: 'auth_rejected',
      reason: 'algorithm',
    });
    expect(resolver).not.toHaveBeenCalled();
  });

  it.each(['none', 'NONE', 'PS256', 'EdDSA', 'RS1'])(
    'refuses a token with alg %s before any key lookup',
    async (alg) => {
      const resolver = await esKeyResolverSpy();
      const strict = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keyResolver: resolver });
      const token = rawToken({ alg, kid: 'kid-es256' });
      expect(await rejection(strict.verify(token))).toEqual({ code: 'auth_rejected', reason: 'algorithm' });
      expect(resolver).not.toHaveBeenCalled();
    },
  );

  it('refuses a token whose header has no alg before any key lookup', async () => {
    const resolver = await esKeyResolverSpy();
    const strict = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keyResolver: resolver });
    expect(await rejection(strict.verify(rawToken({ kid: 'kid-es256' })))).toMatchObject({ reason: 'algorithm' });
    expect(resolver).not.toHaveBeenCalled();
  });

  it('refuses an allowed-by-spec algorithm outside the configured subset before any key lookup', async () => {
    const resolver = await esKeyResolverSpy();
    const subset = createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keyResolver: resolver,
      algorithms: ['ES256'],
    });
    expect(await rejection(subset.verify(await signToken(key('RS256'))))).toMatchObject({ reason: 'algorithm' });
    expect(resolver).not.toHaveBeenCalled();
  });

  it('accepts a token of the configured subset through the key resolver', async () => {
    const resolver = await esKeyResolverSpy();
    const subset = createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keyResolver: resolver,
      algorithms: ['ES256'],
    });
    await expect(subset.verify(await signToken(key('ES256')))).resolves.toMatchObject({ tenant: 'acme' });
    expect(resolver).toHaveBeenCalledWith({ alg: 'ES256', kid: 'kid-es256' });
  });

  it('refuses a token whose kid names a key that cannot verify its algorithm', async () => {
    const token = await signToken(key('RS256'), claimsFor(), { kid: key('ES256').kid });
    expect(await rejection(verifier.verify(token))).toMatchObject({ reason: 'algorithm' });
  });

  it('fails at creation when the configured algorithms include one outside the six', () => {
    expect(() =>
      createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: [], algorithms: ['HS256' as SigningAlgorithm] }),
    ).toThrow(/HS256/);
  });

  it('fails at creation when the configured algorithm list is empty', () => {
    expect(() => createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: [], algorithms: [] })).toThrow(
      /empty/,
    );
  });

  it('fails at creation without any key source', () => {
    expect(() => createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE })).toThrow(/jwksUrl, keys or keyResolver/);
  });

  it('fails at creation when a local key has no kid', () => {
    const { kid: _kid, ...anonymous } = key('ES256').publicJwk;
    expect(() => createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys: [anonymous] })).toThrow(/kid/);
  });
});

describe('createTokenVerifier: keys and signature', () => {
  it('rejects a token whose kid is unknown', async () => {
    const token = await signToken(key('ES256'), claimsFor(), { kid: 'rotated-away' });
    expect(await rejection(verifier.verify(token))).toEqual({ code: 'auth_rejected', reason: 'kid' });
  });

  it('rejects a token without a kid', async () => {
    const token = await signToken(key('ES256'), claimsFor(), { kid: undefined });
    expect(await rejection(verifier.verify(token))).toMatchObject({ reason: 'kid' });
  });

  it('rejects a token signed by another key under a known kid', async () => {
    const impostor = await generateTestKey('ES256', key('ES256').kid);
    expect(await rejection(verifier.verify(await signToken(impostor)))).toEqual({
      code: 'auth_rejected',
      reason: 'signature',
    });
  });

  it('rejects a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await signToken(key('ES256'))).split('.');
    const forged = rawToken({}, claimsFor({ tenant: 'other' })).split('.')[1];
    expect(await rejection(verifier.verify(`${header}.${forged}.${signature}`))).toMatchObject({ reason: 'signature' });
  });

  it.each(['', 'not-a-jwt', 'a.b.c'])('rejects the malformed token %j', async (token) => {
    expect(await rejection(verifier.verify(token))).toEqual({ code: 'auth_rejected', reason: 'malformed' });
  });
});

describe('createTokenVerifier: standard claims', () => {
  const cases: Array<[string, JWTPayload, AuthRejectionReason]> = [
    ['an expired token', { exp: NOW() - 120 }, 'expired'],
    ['a token whose nbf is in the future', { nbf: NOW() + 120 }, 'not yet valid'],
    ['a token from another issuer', { iss: 'https://evil.test' }, 'issuer'],
    ['a token without iss', { iss: undefined }, 'issuer'],
    ['a token for another audience', { aud: 'ars-admin' }, 'audience'],
    ['a token whose audience only contains the configured one as a prefix', { aud: 'arsx' }, 'audience'],
    ['a token without aud', { aud: undefined }, 'audience'],
    ['a token without exp', { exp: undefined }, 'claims'],
  ];

  it.each(cases)('rejects %s', async (_name, overrides, reason) => {
    const token = await signToken(key('ES256'), claimsFor(overrides));
    expect(await rejection(verifier.verify(token))).toEqual({ code: 'auth_rejected', reason });
  });

  it('accepts a token expired by less than the 30-second clock tolerance', async () => {
    const token = await signToken(key('ES256'), claimsFor({ exp: NOW() - 10 }));
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenant: 'acme' });
  });

  it('accepts a token whose nbf is less than the 30-second clock tolerance ahead', async () => {
    const token = await signToken(key('ES256'), claimsFor({ nbf: NOW() + 10 }));
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenant: 'acme' });
  });

  it('applies a configured clock tolerance of zero', async () => {
    const strict = createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: [key('ES256').publicJwk],
      clockToleranceSeconds: 0,
    });
    const token = await signToken(key('ES256'), claimsFor({ exp: NOW() - 10 }));
    expect(await rejection(strict.verify(token))).toMatchObject({ reason: 'expired' });
  });

  it('accepts an aud array that contains the configured audience exactly', async () => {
    const token = await signToken(key('ES256'), claimsFor({ aud: ['other', AUDIENCE] }));
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenant: 'acme' });
  });

  it('judges exp against the injected clock', async () => {
    const later = createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: [key('ES256').publicJwk],
      now: () => new Date(Date.now() + 3_600_000),
    });
    expect(await rejection(later.verify(await signToken(key('ES256'))))).toMatchObject({ reason: 'expired' });
  });
});

describe('createTokenVerifier: service claims', () => {
  const cases: Array<[string, JWTPayload]> = [
    ['a token without tenant', { tenant: undefined }],
    ['a token without user', { user: undefined }],
    ['a token with an empty tenant', { tenant: '' }],
    ['a token whose user is not a string', { user: 42 }],
    ['a token whose scopes is a string', { scopes: 'admin' }],
    ['a token whose scopes is an object', { scopes: { admin: true } }],
    ['a token whose scopes holds a non-string', { scopes: ['admin', 1] }],
    ['a token whose session claim is not a string', { session: 7 }],
  ];

  it.each(cases)('rejects %s', async (_name, overrides) => {
    const token = await signToken(key('ES256'), claimsFor(overrides));
    expect(await rejection(verifier.verify(token))).toEqual({ code: 'auth_rejected', reason: 'claims' });
  });

  it('accepts an empty scopes array as no scopes', async () => {
    const claims = await verifier.verify(await signToken(key('ES256'), claimsFor({ scopes: [] })));
    expect(claims.scopes).toEqual([]);
  });

  it('treats an absent scopes claim as no scopes', async () => {
    const claims = await verifier.verify(await signToken(key('ES256'), claimsFor({ scopes: undefined })));
    expect(claims.scopes).toEqual([]);
  });

  it('returns no session when the token has no session claim', async () => {
    const claims = await verifier.verify(await signToken(key('ES256'), claimsFor({ session: undefined })));
    expect(claims.session).toBeUndefined();
  });

  it('returns iss and sub alongside the service claims', async () => {
    const claims = await verifier.verify(await signToken(key('ES256'), claimsFor({ sub: 'alice@idp' })));
    expect(claims).toMatchObject({ iss: ISSUER, sub: 'alice@idp' });
  });
});

describe('createTokenVerifier: remote JWKS', () => {
  function remoteVerifier(fetchCount: { calls: number }): TokenVerifier {
    return createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      jwksUrl: 'https://idp.test/.well-known/jwks.json',
      jwksOptions: {
        [customFetch]: async () => {
          fetchCount.calls += 1;
          return Response.json({ keys: [{ ...key('ES384').publicJwk, alg: 'ES384' }] });
        },
      },
    });
  }

  it('accepts a token whose kid is in the remote key set', async () => {
    const fetches = { calls: 0 };
    await expect(remoteVerifier(fetches).verify(await signToken(key('ES384')))).resolves.toMatchObject({
      user: 'alice',
    });
    expect(fetches.calls).toBe(1);
  });

  it('rejects a token whose kid is not in the remote key set', async () => {
    const token = await signToken(key('ES384'), claimsFor(), { kid: 'unknown' });
    expect(await rejection(remoteVerifier({ calls: 0 }).verify(token))).toMatchObject({ reason: 'kid' });
  });

  it('refuses an HS256 token without fetching the remote key set', async () => {
    const fetches = { calls: 0 };
    const token = await signHmacToken('HS256', key('ES384').kid);
    expect(await rejection(remoteVerifier(fetches).verify(token))).toMatchObject({ reason: 'algorithm' });
    expect(fetches.calls).toBe(0);
  });

  it('rejects with reason kid when the remote key set cannot be loaded', async () => {
    const broken = createTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      jwksUrl: 'https://idp.test/jwks',
      jwksOptions: { [customFetch]: async () => new Response('nope', { status: 500 }) },
    });
    expect(await rejection(broken.verify(await signToken(key('ES384'))))).toEqual({
      code: 'auth_rejected',
      reason: 'kid',
    });
  });
});

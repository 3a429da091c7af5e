import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { authRejectionReason, createTokenIssuer, createTokenVerifier } from '../src/index.ts';

function pem(type: 'ec' | 'rsa', options: { namedCurve?: string; modulusLength?: number }): string {
  const { privateKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: options.namedCurve ?? 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048 });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
}

const P256 = pem('ec', { namedCurve: 'P-256' });

describe('createTokenIssuer', () => {
  it('mints tokens from a PKCS#8 PEM that its own verifier accepts', async () => {
    const issuer = await createTokenIssuer({ issuer: 'ars-gateway', audience: 'ars', signingKey: P256 });
    const token = await issuer.mint({ tenant: 't1', user: 'u1', session: 's1', scopes: ['admin'] });
    await expect(issuer.verifier.verify(token)).resolves.toMatchObject({
      tenant: 't1',
      user: 'u1',
      session: 's1',
      scopes: ['admin'],
      iss: 'ars-gateway',
      kid: issuer.kid,
    });
  });

  it('answers the jti and the lifetime of an issued token', async () => {
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256 });
    const issued = await issuer.issue({ tenant: 't', user: 'u', ttlSeconds: 120 });
    const payload = decodeJwt(issued.token);
    expect(payload.jti).toBe(issued.jti);
    expect(payload.exp).toBe(issued.expiresAt);
    expect(issued.expiresAt - issued.issuedAt).toBe(120);
  });

  it('gives every token a fresh jti', async () => {
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256 });
    const a = await issuer.issue({ tenant: 't', user: 'u' });
    const b = await issuer.issue({ tenant: 't', user: 'u' });
    expect(a.jti).not.toBe(b.jti);
  });

  it('derives the kid from the key (RFC 7638 thumbprint) so that replicas sharing the key agree', async () => {
    const one = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256 });
    const two = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256 });
    expect(one.kid).toBe(two.kid);
    await expect(two.verifier.verify(await one.mint({ tenant: 't', user: 'u' }))).resolves.toMatchObject({
      tenant: 't',
    });
  });

  it('uses a configured kid', async () => {
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256, kid: 'rot-1' });
    expect(decodeProtectedHeader(await issuer.mint({ tenant: 't', user: 'u' }))).toMatchObject({ kid: 'rot-1' });
  });

  it.each([
    ['P-384', { namedCurve: 'P-384' }, 'ES384'],
    ['P-521', { namedCurve: 'P-521' }, 'ES512'],
  ])('signs with the algorithm of an EC %s key', async (_curve, options, alg) => {
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: pem('ec', options) });
    expect(decodeProtectedHeader(await issuer.mint({ tenant: 't', user: 'u' })).alg).toBe(alg);
  });

  it('signs with RS256 for an RSA key unless told otherwise', async () => {
    const key = pem('rsa', { modulusLength: 2048 });
    const rs256 = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: key });
    const rs512 = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: key, rsaAlgorithm: 'RS512' });
    expect(decodeProtectedHeader(await rs256.mint({ tenant: 't', user: 'u' })).alg).toBe('RS256');
    expect(decodeProtectedHeader(await rs512.mint({ tenant: 't', user: 'u' })).alg).toBe('RS512');
  });

  it('accepts a private JWK', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = privateKey.export({ format: 'jwk' });
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: jwk as never });
    await expect(issuer.verifier.verify(await issuer.mint({ tenant: 't', user: 'u' }))).resolves.toBeDefined();
  });

  it('publishes only the public half of the key', async () => {
    const issuer = await createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: P256 });
    expect(issuer.publicJwks.keys[0]).not.toHaveProperty('d');
    const verifier = createTokenVerifier({ issuer: 'i', audience: 'a', keys: issuer.publicJwks.keys });
    await expect(verifier.verify(await issuer.mint({ tenant: 't', user: 'u' }))).resolves.toBeDefined();
  });

  it('refuses an RSA key below 2048 bits', async () => {
    await expect(
      createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: pem('rsa', { modulusLength: 1024 }) }),
    ).rejects.toThrow(/2048/);
  });

  it('refuses a key of another type', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const key = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    await expect(createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: key })).rejects.toThrow(/ed25519/);
  });

  it('refuses text that is not a private key', async () => {
    await expect(createTokenIssuer({ issuer: 'i', audience: 'a', signingKey: 'not a key' })).rejects.toThrow(
      /not a readable private key/,
    );
  });

  it('is refused by a verifier trusting another issuer', async () => {
    const issuer = await createTokenIssuer({ issuer: 'ars-gateway', audience: 'a', signingKey: P256 });
    const other = createTokenVerifier({ issuer: 'https://idp', audience: 'a', keys: issuer.publicJwks.keys });
    const error = await other.verify(await issuer.mint({ tenant: 't', user: 'u' })).catch((e: unknown) => e);
    expect(authRejectionReason(error)).toBe('issuer');
  });
});

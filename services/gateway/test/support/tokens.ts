import { createHmac, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';

/** Test token forge: signs JWTs with node:crypto so tests can build every bad token the spec names. */

export const ISSUER = 'https://idp.test';
export const AUDIENCE = 'ars-test';

function b64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

export interface TestKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  /** The public JWK, as a verifier is configured with. */
  readonly jwk: JsonWebKey & { kid: string; alg: string; use: string };
}

/** A fresh ES256 key pair. */
export function es256Key(kid = `k-${randomUUID()}`): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' } };
}

/** A fresh RS256 key pair. */
export function rs256Key(kid = `k-${randomUUID()}`): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

export interface Claims {
  tenant?: string;
  user?: string;
  session?: string;
  scopes?: string[];
  iss?: string;
  aud?: string;
  exp?: number;
  nbf?: number;
  [extra: string]: unknown;
}

const now = () => Math.floor(Date.now() / 1000);

/** Default claims: tenant t1, user u1, session s1, no scopes, valid for an hour. */
export function claims(overrides: Claims = {}): Claims {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    exp: now() + 3600,
    tenant: 't1',
    user: 'u1',
    session: 's1',
    scopes: [],
    ...overrides,
  };
}

function withoutUndefined(value: Claims): Claims {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Claims;
}

/** Signs with an ES256 or RS256 key. */
export function signToken(key: TestKey, payload: Claims = claims()): string {
  const alg = key.jwk.alg;
  const header = b64url(JSON.stringify({ alg, kid: key.kid, typ: 'JWT' }));
  const body = b64url(JSON.stringify(withoutUndefined(payload)));
  const input = `${header}.${body}`;
  const signature =
    alg === 'ES256'
      ? sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
      : sign('sha256', Buffer.from(input), key.privateKey);
  return `${input}.${b64url(signature)}`;
}

/** An HS256 token (symmetric: must be refused before any key lookup). */
export function hs256Token(kid: string, payload: Claims = claims()): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', kid, typ: 'JWT' }));
  const body = b64url(JSON.stringify(payload));
  const mac = createHmac('sha256', 'shared-secret').update(`${header}.${body}`).digest();
  return `${header}.${body}.${b64url(mac)}`;
}

/** An unsecured `alg: none` token. */
export function noneToken(kid: string, payload: Claims = claims()): string {
  const header = b64url(JSON.stringify({ alg: 'none', kid, typ: 'JWT' }));
  return `${header}.${b64url(JSON.stringify(payload))}.`;
}

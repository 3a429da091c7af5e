import type { Identity } from './page-props.ts';

const STORAGE_KEY = 'ars-console-sign-in';

/** What the console keeps of a sign-in (per browser tab: sessionStorage). */
export interface SignIn {
  readonly token: string;
  /** Overrides the token's session claim (`X-Service-Session`); empty means the claim. */
  readonly session?: string;
}

/** Thrown when a pasted token is not a JWT carrying tenant and user. */
export class TokenFormatError extends Error {
  override readonly name = 'TokenFormatError';
}

function decodeSegment(segment: string): unknown {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * Reads the identity from a token's claims without verifying it: the gateway
 * verifies it on every call, the console only needs to show who is signed in.
 */
export function identityFromToken(token: string, sessionOverride?: string): Identity {
  const parts = token.trim().split('.');
  if (parts.length !== 3 || parts[1] === undefined)
    throw new TokenFormatError('not a JWT: expected three dot-separated parts');
  let claims: Record<string, unknown>;
  try {
    claims = decodeSegment(parts[1]) as Record<string, unknown>;
  } catch {
    throw new TokenFormatError('the token payload is not base64url JSON');
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const tenant = text(claims.tenant);
  const user = text(claims.user);
  if (tenant === '' || user === '') throw new TokenFormatError('the token carries no tenant or user claim');
  const scopes = Array.isArray(claims.scopes) ? claims.scopes.filter((s): s is string => typeof s === 'string') : [];
  const session = sessionOverride?.trim() || text(claims.session);
  return {
    tenant,
    user,
    session,
    scopes,
    ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
  };
}

/** True when the identity holds one of `scopes` (or `scopes` is empty). */
export function hasAnyScope(identity: Identity, scopes: readonly string[] | undefined): boolean {
  return scopes === undefined || scopes.length === 0 || scopes.some((s) => identity.scopes.includes(s));
}

export function loadSignIn(): SignIn | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (raw === null) return undefined;
    const parsed = JSON.parse(raw) as Partial<SignIn>;
    if (typeof parsed.token !== 'string') return undefined;
    return { token: parsed.token, ...(typeof parsed.session === 'string' ? { session: parsed.session } : {}) };
  } catch {
    return undefined;
  }
}

export function saveSignIn(signIn: SignIn | undefined): void {
  if (signIn === undefined) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(signIn));
}

/** True when the console was loaded from this machine (the dev bootstrap answers loopback callers only). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]' || hostname === '::1';
}

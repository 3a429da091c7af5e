import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { TokenClaims } from './token-claims.ts';

/** Inputs of {@link resolveRequestIdentity}. */
export interface RequestIdentityInput {
  /** The verified token claims; `undefined` when the request carried no bearer token. */
  readonly claims: TokenClaims | undefined;
  /** The raw `X-Service-Session` header value, if any. */
  readonly sessionHeader: string | undefined;
}

/**
 * The two-part model: the token says who (tenant, user, scopes), the
 * `X-Service-Session` header says which conversation.
 *
 * 1. A present, non-empty header replaces the token's `session` claim.
 * 2. An absent header (or one that is empty or only whitespace) leaves the claim as the default.
 * 3. Neither gives 401 `identity_required`; there is no silent default.
 * 4. Tenant and user come from the token only; no header can set them.
 *
 * A missing token is also 401 `identity_required` (the identity is unknown,
 * not rejected).
 */
export function resolveRequestIdentity({ claims, sessionHeader }: RequestIdentityInput): VerifiedIdentity {
  if (claims === undefined) throw new ServiceError('identity_required', 'a bearer connection token is required');
  const header = sessionHeader !== undefined && sessionHeader.trim() !== '' ? sessionHeader : undefined;
  const session = header ?? claims.session;
  if (session === undefined || session === '') {
    throw new ServiceError(
      'identity_required',
      'no session: send X-Service-Session or use a token with a session claim',
    );
  }
  return Object.freeze({
    tenant: claims.tenant,
    user: claims.user,
    session,
    scopes: Object.freeze([...claims.scopes]),
  });
}

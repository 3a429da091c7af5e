import { ServiceError, isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { resolveRequestIdentity } from '@ars/auth';
import type { TokenVerifier } from '../ports.ts';

/** The session header of the two-part model. */
export const SESSION_HEADER = 'x-service-session';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The bearer token of `Authorization`, or `undefined` when there is none. */
export function bearerToken(headers: Headers): string | undefined {
  const header = single(headers.authorization);
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * The two-part model: the token says who (tenant, user, scopes), the
 * `X-Service-Session` header says which conversation.
 * Missing bearer → 401 `identity_required`; a token failing verification →
 * 401 `auth_rejected`; no session from header nor claim → 401 `identity_required`.
 */
export async function authenticate(verifier: TokenVerifier, headers: Headers): Promise<VerifiedIdentity> {
  const token = bearerToken(headers);
  if (token === undefined) {
    throw new ServiceError('identity_required', 'send Authorization: Bearer <connection-token>');
  }
  let claims;
  try {
    claims = await verifier.verify(token);
  } catch (error) {
    // Fail closed: whatever the verifier threw, the token is not accepted.
    if (isServiceError(error) && error.code === 'auth_rejected') throw error;
    throw new ServiceError('auth_rejected', 'the token could not be verified', { cause: error });
  }
  const sessionHeader = single(headers[SESSION_HEADER]);
  return resolveRequestIdentity({ claims, sessionHeader });
}

import { ServiceError, isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { resolveRequestIdentity, revocationKeys, tokenFingerprint, tokenRevoked } from '@ars/auth';
import type { RejectionReporter } from '../auth/rejection-events.ts';
import type { RevocationCheck, TokenVerifier, VerifiedClaims } from '../ports.ts';

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

/** What authentication needs. */
export interface Authenticator {
  readonly verifier: TokenVerifier;
  /**
   * The verifier's clock tolerance for `exp`, in seconds: a token is refused
   * from `exp` plus this, and an event stream it opened is closed then.
   */
  readonly clockToleranceSeconds: number;
  readonly revocations: RevocationCheck;
  readonly rejections: RejectionReporter;
}

/** An authenticated request: who, and the token that said so. */
export interface Authenticated {
  readonly identity: VerifiedIdentity;
  /** The presented compact token (a secret: never logged). */
  readonly token: string;
  readonly claims: VerifiedClaims;
  /** The token's revocation keys (`fp.<sha256>`, `jti.<id>`). */
  readonly revocationKeys: readonly string[];
}

async function verify(verifier: TokenVerifier, token: string): Promise<VerifiedClaims> {
  try {
    return await verifier.verify(token);
  } catch (error) {
    // Fail closed: whatever the verifier threw, the token is not accepted.
    if (isServiceError(error) && error.code === 'auth_rejected') throw error;
    throw new ServiceError('auth_rejected', 'the token could not be verified', { cause: error });
  }
}

/**
 * The two-part model: the token says who (tenant, user, scopes), the
 * `X-Service-Session` header says which conversation.
 * Missing bearer → 401 `identity_required`; a token failing verification →
 * 401 `auth_rejected`; a verified but revoked token (cached verifications
 * included) → 401 `auth_rejected` and `auth.rejected` (Reason `revoked`);
 * no session from header nor claim → 401 `identity_required`.
 */
export async function authenticate(auth: Authenticator, headers: Headers): Promise<Authenticated> {
  const token = bearerToken(headers);
  if (token === undefined) {
    throw new ServiceError('identity_required', 'send Authorization: Bearer <connection-token>');
  }
  const claims = await verify(auth.verifier, token);
  const fingerprint = tokenFingerprint(token);
  const keys = revocationKeys({ fingerprint, jti: claims.jti });
  const sessionHeader = single(headers[SESSION_HEADER]);
  if ((await auth.revocations.find(keys)) !== undefined) {
    const session = sessionHeader !== undefined && sessionHeader.trim() !== '' ? sessionHeader : claims.session;
    auth.rejections.revoked({ fingerprint, claims, session: session ?? '' });
    throw tokenRevoked();
  }
  const identity = resolveRequestIdentity({ claims, sessionHeader });
  return { identity, token, claims, revocationKeys: keys };
}

import { errors } from 'jose';
import { ServiceError, isServiceError } from '@ars/contracts';

/**
 * The checks a token can fail. The `auth_rejected` message starts with one
 * of them (`"<reason>: <detail>"`) so that logs say which check failed;
 * clients branch on the code, never on the message.
 */
export const AUTH_REJECTION_REASONS = [
  'malformed',
  'algorithm',
  'kid',
  'signature',
  'expired',
  'not yet valid',
  'issuer',
  'audience',
  'claims',
  'revoked',
] as const;

/** One of {@link AUTH_REJECTION_REASONS}. */
export type AuthRejectionReason = (typeof AUTH_REJECTION_REASONS)[number];

/**
 * Builds the 401 `auth_rejected` error for a failed check.
 *
 * @param reason - which check failed.
 * @param detail - a short human explanation; never echoes configured values.
 */
export function authRejected(reason: AuthRejectionReason, detail: string, cause?: unknown): ServiceError {
  return new ServiceError('auth_rejected', `${reason}: ${detail}`, { cause });
}

/** The reason of an `auth_rejected` error built by {@link authRejected}, else `undefined`. */
export function authRejectionReason(error: unknown): AuthRejectionReason | undefined {
  if (!isServiceError(error) || error.code !== 'auth_rejected') return undefined;
  return AUTH_REJECTION_REASONS.find((reason) => error.message.startsWith(`${reason}: `));
}

const CLAIM_REASONS: Readonly<Record<string, AuthRejectionReason>> = {
  iss: 'issuer',
  aud: 'audience',
  nbf: 'not yet valid',
  exp: 'expired',
};

/**
 * Maps whatever jose (or a key resolver) threw during verification to an
 * `auth_rejected` ServiceError. A ServiceError passes through unchanged; an
 * unrecognised failure is still a rejection (fail closed), reported as
 * `signature`.
 */
export function toAuthRejection(error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  if (error instanceof errors.JWTExpired) return authRejected('expired', 'the token has expired', error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    const timed = error.claim === 'exp' || error.claim === 'nbf';
    // A missing or non-numeric exp/nbf is a claim-shape problem, not a time one.
    const reason = timed && error.reason !== 'check_failed' ? 'claims' : (CLAIM_REASONS[error.claim] ?? 'claims');
    return authRejected(reason, `${error.claim} claim ${error.reason.replaceAll('_', ' ')}`, error);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return authRejected('algorithm', 'algorithm not allowed', error);
  if (error instanceof errors.JWKSNoMatchingKey) return authRejected('kid', 'no key matches the token kid', error);
  if (error instanceof errors.JWKSMultipleMatchingKeys) return authRejected('kid', 'the token kid is ambiguous', error);
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return authRejected('kid', 'the signing key set could not be loaded', error);
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return authRejected('malformed', 'the token is not a valid signed JWT', error);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return authRejected('signature', 'signature verification failed', error);
  }
  return authRejected('signature', 'the token could not be verified', error);
}

/**
 * @ars/auth: connection-token verification (the only package importing
 * jose), the development issuer, the two-part request identity, body
 * identity reconciliation, the scope vocabulary, steering tiers, folding
 * rules, the dev bootstrap guards, the token issuers (dev and configured
 * key) and the revocation key layout. Everything but token verification is a
 * pure function.
 */
export { SIGNING_ALGORITHMS, isSigningAlgorithm } from './algorithms.ts';
export type { SigningAlgorithm } from './algorithms.ts';
export { AUTH_REJECTION_REASONS, authRejectionReason } from './auth-rejection.ts';
export type { AuthRejectionReason } from './auth-rejection.ts';
export type { KeyLookupHeader, KeyResolver } from './key-resolver.ts';
export type { TokenClaims } from './token-claims.ts';
export { createTokenVerifier, DEFAULT_CLOCK_TOLERANCE_SECONDS } from './token-verifier.ts';
export type { TokenVerifier, TokenVerifierConfig } from './token-verifier.ts';
export { cacheVerifications } from './verification-cache.ts';
export type { VerificationCacheOptions } from './verification-cache.ts';
export { createDevIssuer, DEV_DEFAULT_IDENTITY, DEV_TOKEN_TTL_SECONDS } from './dev-issuer.ts';
export type { DevIssuer, DevIssuerOptions, DevTokenRequest } from './dev-issuer.ts';
export { createTokenIssuer, DEFAULT_TOKEN_TTL_SECONDS } from './token-issuer.ts';
export type { IssuedToken, TokenIssuer, TokenIssuerOptions, TokenRequest } from './token-issuer.ts';
export {
  FINGERPRINT_KEY_PREFIX,
  TOKEN_ID_KEY_PREFIX,
  fingerprintKey,
  isRevocationLive,
  parseRevocationEntry,
  revocationKeys,
  tokenFingerprint,
  tokenIdKey,
  tokenRevoked,
} from './revocation.ts';
export type { RevocationEntry } from './revocation.ts';
export { resolveRequestIdentity } from './request-identity.ts';
export type { RequestIdentityInput } from './request-identity.ts';
export { reconcileBodyIdentity, IDENTITY_COMPONENTS } from './reconcile.ts';
export type {
  IdentityComponent,
  ReconcileInput,
  ReconcileMethod,
  ReconciledIdentity,
  Reconciliation,
} from './reconcile.ts';
export { hasScope, isAdmin, canFanIn } from './scopes.ts';
export { deriveSteeringTier, assertSteeringAllowed, steeringTierRank } from './steering.ts';
export type { RunOwner, SteeringCaller } from './steering.ts';
export { foldIsolationFilter, foldSearchFilter, foldTenantFanIn, foldTenantList } from './folding.ts';
export type {
  IsolationFilter,
  IsolationFilterInput,
  SearchFilter,
  SearchFilterInput,
  TenantList,
  TenantListInput,
} from './folding.ts';
export { parseBootstrapBody, isLoopbackRequest, isLoopbackAddress, isLocalHostHeader } from './bootstrap.ts';
export type { BootstrapIdentity, LoopbackRequestInput } from './bootstrap.ts';

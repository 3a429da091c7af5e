import { revocationKeys, tokenFingerprint } from '@ars/auth';
import { AuthRotateTokenRequest, GOVERNANCE_RECORD_TOKEN_ROTATION, ServiceError } from '@ars/contracts';
import type { AuthRotateTokenResponse, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { RevocationCheck, RpcCaller, TokenMinter, VerifiedClaims } from '../ports.ts';

/** The registry method the gateway serves in place of its registry owner (governance). */
export const ROTATE_TOKEN_METHOD = 'auth.rotate_token';

/** What a rotation needs. */
export interface RotationContext {
  /** Absent: no key to sign with (production without ARS_ROTATION_SIGNING_KEY_FILE): 501. */
  readonly minter: TokenMinter | undefined;
  readonly rpc: RpcCaller;
  readonly revocations: RevocationCheck;
  readonly logger: Logger;
  /** How long to wait for the revocation to come back through the KV watch, in ms. */
  readonly deliveryWaitMs: number;
}

/** The rotating request: its verified identity, the token it presented, and its body. */
export interface RotationRequest {
  readonly verified: VerifiedIdentity;
  readonly token: string;
  readonly claims: VerifiedClaims;
  readonly body: unknown;
}

function instant(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

const NO_SIGNING_KEY =
  'auth.rotate_token cannot mint tokens here: the identity provider issues them. Configure ' +
  'ARS_ROTATION_SIGNING_KEY_FILE (a key shared by every gateway replica) to let the gateway issue rotated tokens, ' +
  'or rotate the token at the identity provider';

/**
 * auth.rotate_token (admin; the edge already checked the claim): mints a
 * replacement carrying the presented token's tenant, user, default session
 * claim and scopes with a fresh `jti`; asks governance to record the
 * rotation (which writes the revocation of the presented token to the
 * `ars_revocations` bucket and publishes the redacted audit event); adds the
 * revocation to this replica at once and waits (bounded) until the bucket's
 * watch delivered it; only then reveals the new token, once. A failure before
 * the reveal reveals nothing, and the presented token keeps working unless
 * governance recorded the rotation.
 */
export async function rotateToken(
  context: RotationContext,
  request: RotationRequest,
): Promise<AuthRotateTokenResponse> {
  const { claims, verified } = request;
  if (context.minter === undefined) throw new ServiceError('unimplemented', NO_SIGNING_KEY);
  const body = AuthRotateTokenRequest.parse(request.body);
  if (claims.exp === undefined) {
    throw new ServiceError('invalid_request', 'the presented token has no exp claim and cannot be rotated');
  }
  const issued = await context.minter.issue({
    tenant: claims.tenant,
    user: claims.user,
    ...(claims.session === undefined ? {} : { session: claims.session }),
    scopes: claims.scopes,
    ttlSeconds: body.ttl_seconds,
  });
  const revokedFingerprint = tokenFingerprint(request.token);
  const record = await callInternal(context.rpc, GOVERNANCE_RECORD_TOKEN_ROTATION, verified, {
    revoked: {
      ...(claims.jti === undefined ? {} : { token_id: claims.jti }),
      fingerprint: revokedFingerprint,
      expires_at: instant(claims.exp),
    },
    issued: {
      token_id: issued.jti,
      fingerprint: tokenFingerprint(issued.token),
      expires_at: instant(issued.expiresAt),
    },
  });
  const keys = revocationKeys({ fingerprint: revokedFingerprint, jti: claims.jti });
  context.revocations.add(keys, {
    reason: 'rotated',
    revoked_at: record.rotated_at,
    expires_at: instant(claims.exp),
    tenant: claims.tenant,
    user: claims.user,
    rotation_id: record.rotation_id,
    replaced_by: issued.jti,
  });
  const delivered = await context.revocations.awaitDelivered(keys, context.deliveryWaitMs);
  context.logger.info(
    {
      tenant: claims.tenant,
      user: claims.user,
      tokenId: issued.jti,
      revokedTokenId: claims.jti,
      rotationId: record.rotation_id,
      delivered,
    },
    'connection token rotated',
  );
  return {
    token: issued.token,
    token_id: issued.jti,
    expires_at: instant(issued.expiresAt),
    ...(claims.jti === undefined ? {} : { revoked_token_id: claims.jti }),
  };
}

import { randomUUID } from 'node:crypto';
import { GOVERNANCE_RECORD_TOKEN_ROTATION, refuse, ServiceError } from '@ars/contracts';
import type { GovernanceRecordTokenRotationRequest, VerifiedIdentity } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { normaliseTokenFingerprint, shortTokenFingerprint } from '../domain/fingerprint.ts';
import { revocationKeys } from '../domain/revocation.ts';
import type { RevocationEntry } from '../domain/revocation.ts';
import type { TokenRotationRecord } from '../store/token-rotation.repository.ts';
import type { GovernanceContext } from './context.ts';
import type { PublishableEvent } from './events.ts';
import { publishEvents } from './events.ts';

const ENDPOINT = GOVERNANCE_RECORD_TOKEN_ROTATION;
/** The registry method whose audit trail this is. */
const METHOD = 'auth.rotate_token';

function fingerprintOf(text: string): string {
  const hex = normaliseTokenFingerprint(text);
  if (hex === undefined)
    throw new ServiceError('invalid_request', `invalid ${ENDPOINT.name} request: malformed fingerprint`);
  return hex;
}

function newRecord(
  identity: VerifiedIdentity,
  request: GovernanceRecordTokenRotationRequest,
  at: string,
): TokenRotationRecord {
  const revoked = fingerprintOf(request.revoked.fingerprint);
  const issued = fingerprintOf(request.issued.fingerprint);
  if (revoked === issued) {
    throw new ServiceError('invalid_request', `invalid ${ENDPOINT.name} request: the issued token is the revoked one`);
  }
  return {
    _id: revoked,
    rotation_id: randomUUID(),
    tenant: identity.tenant,
    user: identity.user,
    session: identity.session,
    ...(request.revoked.token_id === undefined ? {} : { revoked_token_id: request.revoked.token_id }),
    revoked_fingerprint: revoked,
    revoked_expires_at: request.revoked.expires_at,
    issued_token_id: request.issued.token_id,
    issued_fingerprint: issued,
    issued_expires_at: request.issued.expires_at,
    rotated_at: at,
    revocation_keys: revocationKeys(revoked, request.revoked.token_id),
  };
}

/** Shape 2 of `audit.admin_scope_used`: the caller rotated its own token; ids and short fingerprints only. */
function auditEvent(record: TokenRotationRecord): PublishableEvent {
  const caller = { tenant: record.tenant, user: record.user, session: record.session };
  const revoked = record.revoked_token_id ?? shortTokenFingerprint(record.revoked_fingerprint);
  return {
    type: 'audit.admin_scope_used',
    eventId: `token-rotation-${record.rotation_id}`,
    payload: {
      Actor: caller,
      Requester: caller,
      Impersonating: caller,
      Reason: `token rotated under admin: revoked ${revoked}, issued ${record.issued_token_id}`,
      Method: METHOD,
    },
  };
}

/**
 * `_governance.record_token_rotation`: see `GovernanceRecordTokenRotationRequest`
 * of `@ars/contracts`; its `admin` gate is the kit's, before the body is read. The revocation is written to KV on every call (a retry after a failed write
 * completes it); the audit event keeps one id per rotation, so a retry within
 * the stream's duplicate window is not published twice.
 */
export function recordTokenRotationHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    const candidate = newRecord(identity, request, new Date(ctx.now()).toISOString());
    const { record, created } = await ctx.repos.rotations.insertOnce(candidate);
    if (!created && record.issued_fingerprint !== candidate.issued_fingerprint) {
      throw refuse(ENDPOINT, 'already_rotated', 'this token was rotated already; the new token must not be revealed');
    }
    const entry: RevocationEntry = {
      reason: 'rotated',
      revoked_at: record.rotated_at,
      expires_at: record.revoked_expires_at,
      tenant: record.tenant,
      user: record.user,
      rotation_id: record.rotation_id,
      replaced_by: record.issued_token_id,
    };
    await ctx.revocations.revoke(record.revocation_keys, entry);
    ctx.logger.info(
      {
        tenant: record.tenant,
        user: record.user,
        rotationId: record.rotation_id,
        revoked: shortTokenFingerprint(record.revoked_fingerprint),
        created,
      },
      'token rotation recorded',
    );
    await publishEvents(ctx, { tenant: record.tenant, user: record.user, session: record.session }, [
      auditEvent(record),
    ]);
    return {
      rotation_id: record.rotation_id,
      ...(record.revoked_token_id === undefined ? {} : { revoked_token_id: record.revoked_token_id }),
      revoked_fingerprint: shortTokenFingerprint(record.revoked_fingerprint),
      issued_token_id: record.issued_token_id,
      rotated_at: record.rotated_at,
      revocation_keys: record.revocation_keys,
      created,
    };
  });
}

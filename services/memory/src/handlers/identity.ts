import { isServiceError } from '@ars/contracts';
import type { ServiceError } from '@ars/contracts';
import { reconcileIdentity, requireAdmin as requireVerifiedAdmin } from '@ars/service-kit';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';
import type { Owner } from '../domain/memory-record.ts';
import type { MemoryDeps } from './deps.ts';

/** Publishes `memory.identity_rejected` for the verified caller, then throws `error`. */
export async function reject(deps: MemoryDeps, verified: VerifiedIdentity, operation: string, error: ServiceError) {
  deps.logger.info({ operation, code: error.code }, 'memory identity check refused');
  await deps.events.identityRejected(verified, operation, error.message);
  return error;
}

/**
 * The target identity: the body identity reconciled with the verified one
 * (memory methods cross nothing, so any contradiction is refused). A refusal
 * publishes `memory.identity_rejected`.
 */
export async function targetFor(
  deps: MemoryDeps,
  methodName: string,
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
): Promise<Owner> {
  try {
    const { tenant, user, session } = reconcileIdentity(methodName, verified, body);
    return { tenant, user, session };
  } catch (error) {
    if (isServiceError(error)) throw await reject(deps, verified, methodName, error);
    throw error;
  }
}

/** memory.put and memory.delete need the verified admin claim: else 403 `identity_scope_required`, published as rejected. */
export async function requireAdmin(deps: MemoryDeps, verified: VerifiedIdentity, operation: string): Promise<void> {
  try {
    requireVerifiedAdmin(operation, verified);
  } catch (error) {
    if (isServiceError(error)) throw await reject(deps, verified, operation, error);
    throw error;
  }
}

import { getMethod, ServiceError } from '@ars/contracts';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';
import { reconcileBodyIdentity } from '@ars/auth';
import type { ReconciledIdentity } from '@ars/auth';

/**
 * The body identity after the shared gate. The gateway reconciles before it
 * forwards; a service checks again because a NATS caller can reach it
 * directly. Authority always comes from `verified`, never from the body.
 */
export function reconcile(methodName: string, verified: VerifiedIdentity, body: unknown): ReconciledIdentity {
  const method = getMethod(methodName);
  if (method === undefined) throw new ServiceError('internal', `${methodName} is not in the registry`);
  const identity = (body as { identity?: IdentityScope } | undefined)?.identity;
  return reconcileBodyIdentity({ verified, body: identity, method }).identity;
}

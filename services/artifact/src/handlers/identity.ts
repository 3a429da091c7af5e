import { reconcileBodyIdentity } from '@ars/auth';
import type { ReconciledIdentity } from '@ars/auth';
import { getMethod } from '@ars/contracts';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';

function methodDef(name: string): MethodDef {
  const method = getMethod(name);
  if (method === undefined) throw new Error(`${name} is not in the method registry`);
  return method;
}

/**
 * The target identity of a request: the body identity reconciled against the
 * verified one under the method's crossing rules. The gateway has already
 * done this; doing it again here keeps the rules true for every caller on the
 * bus, and is a no-op for an identity the gateway reconciled.
 */
export function targetOf(
  methodName: string,
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
): ReconciledIdentity {
  return reconcileBodyIdentity({ verified, body, method: methodDef(methodName) }).identity;
}

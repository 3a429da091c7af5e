import type { IdentityScope } from '@ars/contracts';

/** The `identity` member of a request body (the service-kit's `reconcileIdentity` checks it). */
export function identityOf(body: unknown): IdentityScope | undefined {
  return (body as { identity?: IdentityScope } | undefined)?.identity;
}

import { callInternal } from '@ars/bus';
import type { InternalCaller } from '@ars/bus';
import { GOVERNANCE_OPEN_SECRET, GOVERNANCE_SEAL_SECRET } from '@ars/contracts';
import type { SealedSecretView, SecretPurpose, VerifiedIdentity } from '@ars/contracts';

/**
 * Seals and opens the secrets of OAuth grants through governance
 * (`_governance.seal_secret` / `_governance.open_secret`): agent-registry
 * stores only sealed records and never holds the key-encryption key. Each
 * record is bound to (tenant, purpose, context); a record copied to another
 * binding or tenant does not open.
 */

/** Where a sealed record belongs: its tenant, purpose and context (the binding id and slot, or the flow id). */
export interface SealBinding {
  readonly tenant: string;
  readonly purpose: SecretPurpose;
  readonly context: string;
}

/** Seals and opens secrets. */
export interface Sealer {
  seal(where: SealBinding, secret: string): Promise<SealedSecretView>;
  open(where: SealBinding, sealed: SealedSecretView): Promise<string>;
}

/** Bounds one governance round trip, in ms. */
const SEAL_TIMEOUT_MS = 5_000;

/**
 * The identity the calls travel under: governance only checks that the body
 * tenant is the identity's, so any identity of the tenant serves; this one
 * names agent-registry acting for the tenant, with no scope.
 */
function tenantIdentity(tenant: string): VerifiedIdentity {
  return { tenant, user: 'agent-registry', session: '_oauth', scopes: [] };
}

/** The sealer over governance's internal endpoints. */
export function createGovernanceSealer(rpc: InternalCaller): Sealer {
  return {
    async seal(where, secret) {
      const body = { tenant: where.tenant, purpose: where.purpose, context: where.context, secret };
      const reply = await callInternal(rpc, GOVERNANCE_SEAL_SECRET, tenantIdentity(where.tenant), body, {
        timeoutMs: SEAL_TIMEOUT_MS,
      });
      return reply.sealed;
    },
    async open(where, sealed) {
      const body = { tenant: where.tenant, purpose: where.purpose, context: where.context, sealed };
      const reply = await callInternal(rpc, GOVERNANCE_OPEN_SECRET, tenantIdentity(where.tenant), body, {
        timeoutMs: SEAL_TIMEOUT_MS,
      });
      return reply.secret;
    },
  };
}

/** The context of a binding's sealed access token, refresh token or client secret. */
export function grantContext(bindingId: string, slot: 'access' | 'refresh' | 'client'): string {
  return `${bindingId}#${slot}`;
}

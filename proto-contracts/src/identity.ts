import { z } from 'zod';

/**
 * The body `identity` of every request. `{}` is valid: the gateway backfills
 * tenant, user and session from the verified identity. `run` and `scope` are
 * independent of the token; `scope` is never consulted for authority.
 */
export const IdentityScope = z
  .strictObject({
    tenant: z.string().min(1).optional(),
    user: z.string().min(1).optional(),
    session: z.string().min(1).optional(),
    run: z.string().min(1).optional().describe('steering target: the task id; mandatory on steering controls'),
    scope: z.string().optional().describe('steering claim member; ignored for authority'),
  })
  .describe('IdentityScope');
export type IdentityScope = z.infer<typeof IdentityScope>;

/** The identity quad carried in event payloads (`Identity`, `Actor`, `Author`). */
export const IdentityQuad = z
  .object({ tenant: z.string(), user: z.string(), session: z.string(), run: z.string() })
  .describe('identity-quad');
export type IdentityQuad = z.infer<typeof IdentityQuad>;

/** An identity triple as used in audit events (`Requester`, `Impersonating`). */
export const IdentityTriple = z.object({ tenant: z.string(), user: z.string(), session: z.string() });
export type IdentityTriple = z.infer<typeof IdentityTriple>;

/** The scope vocabulary: a closed set, no third elevated scope. */
export const SCOPES = { admin: 'admin', consoleFleet: 'console:fleet', agentConfigUser: 'agent_config:user' } as const;
export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/**
 * The identity the gateway verified: tenant and user from the token, the
 * session from `X-Service-Session` or the token's claim, scopes from the token.
 * Travels to services in NATS headers; services trust it, never the body.
 */
export interface VerifiedIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly scopes: readonly string[];
}

/** Steering tiers in ascending order of authority. */
export const STEERING_TIERS = ['session_user', 'owner_user', 'admin'] as const;
export type SteeringTier = (typeof STEERING_TIERS)[number];

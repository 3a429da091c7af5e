import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Timestamp, pageOf, pageRequest, record, requestOf } from '../schemas/common.ts';
import {
  GovernanceTier,
  LlmOverrides,
  LlmOverridesView,
  RunOverrides,
  RunOverridesView,
  TargetTenant,
} from '../schemas/governance.ts';
import { StateHistoryFilter, StateRecord } from '../schemas/session.ts';
import { onFamily } from './routing.ts';

/**
 * runs.set_overrides: LLM overrides for the later runs of the verified
 * session (a layer of the effective configuration resolved at start). A
 * member set to `null` is cleared; an absent member is left unchanged.
 */
export const RunSetOverridesRequest = requestOf({ overrides: RunOverrides });
export type RunSetOverridesRequest = z.infer<typeof RunSetOverridesRequest>;

/** The session's overrides after the change. */
export const RunSetOverridesResponse = record({
  session_id: z.string(),
  overrides: RunOverridesView,
  updated_at: Timestamp,
});
export type RunSetOverridesResponse = z.infer<typeof RunSetOverridesResponse>;

/** state.history: the session's state records in order; the body identity names the session. */
export const StateHistoryRequest = requestOf({ filter: StateHistoryFilter.optional(), ...pageRequest });
export type StateHistoryRequest = z.infer<typeof StateHistoryRequest>;

/** A page of state records, oldest first. */
export const StateHistoryResponse = record({ session_id: z.string(), ...pageOf(StateRecord) });
export type StateHistoryResponse = z.infer<typeof StateHistoryResponse>;

/** Bounds of the lifetime of a rotated token, in seconds (default one hour). */
export const ROTATED_TOKEN_TTL_SECONDS = { default: 3600, min: 60, max: 31_536_000 } as const;

/** auth.rotate_token (admin): rotate the caller's own connection token. */
export const AuthRotateTokenRequest = requestOf({
  ttl_seconds: z
    .int()
    .min(ROTATED_TOKEN_TTL_SECONDS.min)
    .max(ROTATED_TOKEN_TTL_SECONDS.max)
    .default(ROTATED_TOKEN_TTL_SECONDS.default),
});
export type AuthRotateTokenRequest = z.infer<typeof AuthRotateTokenRequest>;

/** The new token, revealed once; the presented token stops working at once. */
export const AuthRotateTokenResponse = record({
  token: z.string().describe('the new connection token; shown once, never again'),
  token_id: z.string().describe('its id (jti); safe to log'),
  expires_at: Timestamp,
  revoked_token_id: z.string().optional().describe('id of the token that was rotated out'),
});
export type AuthRotateTokenResponse = z.infer<typeof AuthRotateTokenResponse>;

/** governance.get_tenant_overrides (admin). */
export const GovernanceGetTenantOverridesRequest = requestOf({ tenant: TargetTenant });
export type GovernanceGetTenantOverridesRequest = z.infer<typeof GovernanceGetTenantOverridesRequest>;

/** A tenant's LLM overrides (the members currently set). */
export const GovernanceGetTenantOverridesResponse = record({
  tenant: z.string(),
  overrides: LlmOverridesView,
  updated_at: Timestamp.optional(),
});
export type GovernanceGetTenantOverridesResponse = z.infer<typeof GovernanceGetTenantOverridesResponse>;

/** governance.set_tenant_overrides (admin): `null` clears a member; absent leaves it. */
export const GovernanceSetTenantOverridesRequest = requestOf({ tenant: TargetTenant, overrides: LlmOverrides });
export type GovernanceSetTenantOverridesRequest = z.infer<typeof GovernanceSetTenantOverridesRequest>;

/** The tenant's overrides after the change. */
export const GovernanceSetTenantOverridesResponse = record({
  tenant: z.string(),
  overrides: LlmOverridesView,
  updated_at: Timestamp,
});
export type GovernanceSetTenantOverridesResponse = z.infer<typeof GovernanceSetTenantOverridesResponse>;

/** governance.rotate_key (admin): install a provider key; only its fingerprint is ever shown. */
export const GovernanceRotateKeyRequest = requestOf({
  provider: z.string().min(1).max(128),
  key: z.string().min(1).max(8192).describe('the secret; never echoed, logged or published'),
});
export type GovernanceRotateKeyRequest = z.infer<typeof GovernanceRotateKeyRequest>;

/** The new key's fingerprint. */
export const GovernanceRotateKeyResponse = record({
  provider: z.string(),
  fingerprint: z.string().describe('sha256:<first 16 hex> of the key'),
  rotated_at: Timestamp,
});
export type GovernanceRotateKeyResponse = z.infer<typeof GovernanceRotateKeyResponse>;

/** governance.set_posture (admin): the runtime-wide governance tiers. */
export const GovernanceSetPostureRequest = requestOf({
  default_tier: z.string().min(1).max(128),
  tiers: z.array(GovernanceTier).min(1).max(100),
}).superRefine((request, ctx) => {
  const names = request.tiers.map((t) => t.name);
  if (!names.includes(request.default_tier)) {
    ctx.addIssue({ code: 'custom', path: ['default_tier'], message: 'must name one of tiers' });
  }
  if (new Set(names).size !== names.length) {
    ctx.addIssue({ code: 'custom', path: ['tiers'], message: 'tier names must be unique' });
  }
  request.tiers.forEach((tier, index) => {
    const chain = (tier.failover ?? []).map((p) => p.name);
    if (new Set(chain).size !== chain.length) {
      ctx.addIssue({ code: 'custom', path: ['tiers', index, 'failover'], message: 'provider names must be unique' });
    }
  });
});
export type GovernanceSetPostureRequest = z.infer<typeof GovernanceSetPostureRequest>;

/** The posture after the change. */
export const GovernanceSetPostureResponse = record({
  default_tier: z.string(),
  tiers: z.array(GovernanceTier),
  updated_at: Timestamp,
});
export type GovernanceSetPostureResponse = z.infer<typeof GovernanceSetPostureResponse>;

/** Runs, state, auth and governance admin: `/v1/<family>/<name>`. */
export const RUNS_STATE_AUTH_GOVERNANCE_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'runs.set_overrides',
    family: 'runs',
    ...onFamily('runs.set_overrides'),
    service: 'run-executor',
    auth: ['M'],
    requestName: 'RunSetOverridesRequest',
    responseName: 'RunSetOverridesResponse',
    request: RunSetOverridesRequest,
    response: RunSetOverridesResponse,
    summary: "Set LLM overrides for the session's later runs.",
  }),
  defineMethod({
    name: 'state.history',
    family: 'state',
    ...onFamily('state.history'),
    service: 'session',
    auth: ['R'],
    crossing: { tenant: 'admin', user: 'admin', session: 'admin', refusal: 'not_found' },
    requestName: 'StateHistoryRequest',
    responseName: 'StateHistoryResponse',
    request: StateHistoryRequest,
    response: StateHistoryResponse,
    summary: "Read a session's state records (task transitions and turns) in order.",
  }),
  defineMethod({
    name: 'auth.rotate_token',
    family: 'auth',
    ...onFamily('auth.rotate_token'),
    service: 'governance',
    auth: ['M', 'A'],
    requestName: 'AuthRotateTokenRequest',
    responseName: 'AuthRotateTokenResponse',
    request: AuthRotateTokenRequest,
    response: AuthRotateTokenResponse,
    summary: "Rotate the caller's own connection token (one-time reveal).",
  }),
  defineMethod({
    name: 'governance.get_tenant_overrides',
    family: 'governance',
    ...onFamily('governance.get_tenant_overrides'),
    service: 'governance',
    auth: ['R', 'A'],
    requestName: 'GovernanceGetTenantOverridesRequest',
    responseName: 'GovernanceGetTenantOverridesResponse',
    request: GovernanceGetTenantOverridesRequest,
    response: GovernanceGetTenantOverridesResponse,
    summary: "Read a tenant's LLM overrides (admin).",
  }),
  defineMethod({
    name: 'governance.rotate_key',
    family: 'governance',
    ...onFamily('governance.rotate_key'),
    service: 'governance',
    auth: ['M', 'A'],
    requestName: 'GovernanceRotateKeyRequest',
    responseName: 'GovernanceRotateKeyResponse',
    request: GovernanceRotateKeyRequest,
    response: GovernanceRotateKeyResponse,
    summary: 'Rotate an LLM provider key (admin).',
  }),
  defineMethod({
    name: 'governance.set_posture',
    family: 'governance',
    ...onFamily('governance.set_posture'),
    service: 'governance',
    auth: ['M', 'A'],
    requestName: 'GovernanceSetPostureRequest',
    responseName: 'GovernanceSetPostureResponse',
    request: GovernanceSetPostureRequest,
    response: GovernanceSetPostureResponse,
    summary: 'Set the governance tiers and the default tier (admin).',
  }),
  defineMethod({
    name: 'governance.set_tenant_overrides',
    family: 'governance',
    ...onFamily('governance.set_tenant_overrides'),
    service: 'governance',
    auth: ['M', 'A'],
    requestName: 'GovernanceSetTenantOverridesRequest',
    responseName: 'GovernanceSetTenantOverridesResponse',
    request: GovernanceSetTenantOverridesRequest,
    response: GovernanceSetTenantOverridesResponse,
    summary: "Set a tenant's LLM overrides (admin).",
  }),
];

import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { FailoverProvider, LlmOverridesView } from '../schemas/governance.ts';

/**
 * The governance service's internal endpoints, called with the run's (or
 * the caller's) verified identity as received. A body identity's tenant must
 * equal the calling identity's tenant (403 `scope_mismatch` otherwise).
 */

const Name = z.string().min(1).max(256);

/** The identity quad of a run-scoped call; `run` is the task id (`''` outside a run). */
export const GovernanceRunIdentity = z.strictObject({
  tenant: Name,
  user: Name,
  session: Name,
  run: z.string().max(256),
});
export type GovernanceRunIdentity = z.infer<typeof GovernanceRunIdentity>;
const Tier = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe("governance tier; absent or unknown: the posture's default");

/**
 * `_governance.record_cost`: asked by the run engine after every LLM call
 * (also a failed one that cost something). Adds the cost to the tenant's
 * spend in the tier, in the current day, month and total windows. With a
 * `call_id` seen before for the tenant nothing is added (a redelivered step
 * records at most once). Publishes nothing: the next admission refuses once
 * the ceiling is reached.
 */
export const GovernanceRecordCostRequest = z.strictObject({
  identity: GovernanceRunIdentity,
  model: Name,
  tier: Tier,
  cost_usd: z.number().nonnegative().describe('cost of the call in USD'),
  tokens_in: z.int().nonnegative(),
  tokens_out: z.int().nonnegative(),
  call_id: Name.optional().describe('idempotency key of the call, e.g. "<run>:<step>:<attempt>:<claim>"'),
});
export type GovernanceRecordCostRequest = z.infer<typeof GovernanceRecordCostRequest>;

/** Cost records one `_governance.record_costs` request carries at most. */
export const MAX_RECORDED_COSTS = 100;

/**
 * `_governance.record_costs`: several LLM calls of one run recorded in one
 * request, each exactly as `_governance.record_cost` would record it (once
 * per `call_id`). The engine sends what its run's calls cost together when
 * no admission carried them (calls in a tier that constrains nothing are
 * admitted without asking, see {@link GOVERNANCE_ADMISSION_POSTURE}).
 */
export const GovernanceRecordCostsRequest = z.strictObject({
  identity: GovernanceRunIdentity,
  records: z
    .array(GovernanceRecordCostRequest.omit({ identity: true }))
    .min(1)
    .max(MAX_RECORDED_COSTS),
});
export type GovernanceRecordCostsRequest = z.infer<typeof GovernanceRecordCostsRequest>;

/** How many records were added, and how many were not (their `call_id` recorded before). */
export const GovernanceRecordCostsReply = z.object({
  recorded: z.int().nonnegative(),
  duplicates: z.int().nonnegative(),
});
export type GovernanceRecordCostsReply = z.infer<typeof GovernanceRecordCostsReply>;

/**
 * `_governance.admission_posture`: which tiers admit every call, for the
 * run engine to admit such calls itself. A tier is `open` when it lists no
 * models and has no budget, max-tokens cap or rate limit: its admission can
 * neither refuse, clip, delay nor publish anything, whatever the call.
 * `default_tier` is the tier a call naming none (or a tier not listed)
 * falls under. The engine keeps the answer until a configuration change is
 * announced (`ars.cfg.changed`: governance announces every posture write).
 */
export const GovernanceAdmissionPostureRequest = z.strictObject({});
export type GovernanceAdmissionPostureRequest = z.infer<typeof GovernanceAdmissionPostureRequest>;

export const GovernanceAdmissionPostureReply = z.object({
  default_tier: z.string(),
  tiers: z.array(z.object({ name: z.string(), open: z.boolean() })),
  updated_at: z.string().optional().describe('of the posture; absent while the built-in posture applies'),
});
export type GovernanceAdmissionPostureReply = z.infer<typeof GovernanceAdmissionPostureReply>;

/** One spend window after the call. */
export const SpendWindowView = z.object({
  period: z.enum(['day', 'month', 'total']),
  period_start: z.string(),
  spent_usd: z.number(),
  tokens_in: z.int(),
  tokens_out: z.int(),
  calls: z.int(),
});

/** The spend after the call, and the budget's state when the tier has one. */
export const GovernanceRecordCostReply = z.object({
  tier: z.string(),
  duplicate: z.boolean().describe('true when call_id was already recorded: nothing added'),
  spend: z.array(SpendWindowView),
  budget: z
    .object({
      period: z.string(),
      period_start: z.string(),
      spent: z.number().describe('in the budget currency'),
      ceiling: z.number(),
      currency: z.string(),
      exceeded: z.boolean().describe('true: the next admit_llm_call of the tier is refused'),
    })
    .optional(),
});
export type GovernanceRecordCostReply = z.infer<typeof GovernanceRecordCostReply>;

/**
 * `_governance.admit_llm_call`: asked by the run engine before every LLM call.
 *
 * Checks, in order, against the call's tier (`tier`, else the default tier):
 * 1. `model` must be in the tier's `models` (when listed), else refused `model_not_allowed`.
 * 2. the tier's budget: once the tenant's spend in the current period
 *    (day/month/total, UTC) has reached the ceiling, refused `budget_exceeded`
 *    and `governance.budget_exceeded` is published.
 * 3. the max-tokens cap: `requested_max_tokens` above it publishes
 *    `governance.maxtokens_exceeded` and is clipped to the cap (policy
 *    `clip`, the default) or refused `max_tokens_exceeded` (policy `refuse`).
 * 4. the token bucket of (tenant, tier, model): a call draws 1 token (unit
 *    `calls`) or its admitted max tokens (unit `tokens`). Short of tokens,
 *    `governance.rate_limited` is published and the call either waits
 *    (policy `wait`: the tokens are reserved and `wait_ms` says how long to
 *    sleep before calling) or is refused `rate_limited` (policy `fail`, a
 *    wait above `max_wait_ms`, or a draw above the capacity).
 *
 * With `record_cost` (the run's previous call), that cost is recorded first,
 * exactly as `_governance.record_cost` would (and kept whatever the
 * admission decides), so a budget that call crossed refuses this one; the
 * engine saves one request per call this way.
 *
 * A refusal carries its reason (see {@link GOVERNANCE_ADMIT_LLM_CALL}'s
 * refusals); the reason is also the ErrorCode the run fails with
 * (`task.failed`), and the message reads `<reason>: <detail>`.
 */
export const GovernanceAdmitLlmCallRequest = z.strictObject({
  identity: GovernanceRunIdentity.describe('the run: tenant, user, session, run (task id)'),
  model: Name.describe('the model the call will use (after overrides)'),
  tier: Tier,
  requested_max_tokens: z.int().positive().describe('max tokens the call would ask the provider for'),
  record_cost: GovernanceRecordCostRequest.omit({ identity: true })
    .optional()
    .describe("the run's previous call, recorded before this one is admitted"),
});
export type GovernanceAdmitLlmCallRequest = z.infer<typeof GovernanceAdmitLlmCallRequest>;

/** The answer of an admitted call. */
export const GovernanceAdmitLlmCallReply = z.object({
  allowed: z.literal(true),
  tier: z.string().describe('the tier applied'),
  model: z.string(),
  max_tokens: z.int().positive().describe('max tokens to ask for: the request, clipped to the cap'),
  clipped: z.boolean(),
  wait_ms: z.int().nonnegative().describe('sleep this long before calling (0: call now)'),
  recorded: GovernanceRecordCostReply.optional().describe('what recording `record_cost` did, when the request had one'),
});
export type GovernanceAdmitLlmCallReply = z.infer<typeof GovernanceAdmitLlmCallReply>;

/**
 * `_governance.failover`: asked by the run engine when a provider call failed
 * with a provider error. Records the failure (llm.posture's `healthy`) and
 * answers the next provider of the tier's failover chain: the one after
 * `from_provider`, or the chain's first when `from_provider` is not in it.
 * `hop_index` is 1 for the first failover of a call, 2 for the next…; past
 * the chain's length, or at its end, the answer is `provider: null` (fail the
 * call). When a provider is returned, `governance.failover` is published.
 * Fetch its key with `_governance.provider_key`.
 */
export const GovernanceFailoverRequest = z.strictObject({
  identity: GovernanceRunIdentity,
  tier: Tier,
  from_provider: Name.describe('the provider that failed'),
  hop_index: z.int().positive().describe('1 for the first failover of this call'),
  accumulated_cost: z.number().nonnegative().describe('USD spent on this call so far, over every hop'),
  reason: z.string().max(1024).describe('the provider error, without secrets'),
});
export type GovernanceFailoverRequest = z.infer<typeof GovernanceFailoverRequest>;

/** The provider to retry on, or null. */
export const GovernanceFailoverReply = z.object({
  provider: FailoverProvider.nullable(),
  hop_index: z.int(),
  remaining_hops: z.int().nonnegative().describe('hops the chain still allows after this one'),
});
export type GovernanceFailoverReply = z.infer<typeof GovernanceFailoverReply>;

/** `_governance.effective_overrides`: the tenant's LLM overrides, a layer of the run's effective configuration. */
export const GovernanceEffectiveOverridesRequest = z.strictObject({ tenant: Name });
export type GovernanceEffectiveOverridesRequest = z.infer<typeof GovernanceEffectiveOverridesRequest>;

/** The members currently set (`{}` when none). */
export const GovernanceEffectiveOverridesReply = z.object({
  tenant: z.string(),
  overrides: LlmOverridesView,
  updated_at: z.string().optional(),
});
export type GovernanceEffectiveOverridesReply = z.infer<typeof GovernanceEffectiveOverridesReply>;

/**
 * `_governance.provider_key`: the decrypted API key of a tenant's provider,
 * for the run engine only. Never log or publish `key`. No key installed:
 * refused `no_key`; a key sealed under another key-encryption key (the KEK
 * changed): refused `key_unreadable`.
 */
export const GovernanceProviderKeyRequest = z.strictObject({ tenant: Name, provider: Name });
export type GovernanceProviderKeyRequest = z.infer<typeof GovernanceProviderKeyRequest>;

/** The key and its fingerprint. */
export const GovernanceProviderKeyReply = z.object({
  tenant: z.string(),
  provider: z.string(),
  key: z.string(),
  fingerprint: z.string().describe('sha256:<first 16 hex>'),
  rotated_at: z.string(),
});
export type GovernanceProviderKeyReply = z.infer<typeof GovernanceProviderKeyReply>;

const TokenFingerprint = z
  .string()
  .regex(/^(sha256:)?[0-9a-f]{64}$/)
  .describe('SHA-256 of the compact token string: 64 lowercase hex digits, optionally prefixed "sha256:"');
const Instant = z.iso.datetime({ offset: true });

/**
 * `_governance.record_token_rotation`: asked by the gateway while it serves
 * `auth.rotate_token` (admin), after minting the new token and before
 * revealing it. Call it with the caller's verified identity (it must hold
 * `admin`, else `identity_scope_required`). Writes the revoked token to the
 * `ars_revocations` KV bucket (keys `fp.<hex>` and, with a `token_id`,
 * `jti.<base64url>`), stores the rotation and publishes
 * `audit.admin_scope_used` (shape 2, Method `auth.rotate_token`; ids and
 * short fingerprints only). Idempotent for the same (revoked, issued) pair;
 * the same revoked token with another issued token is `conflict` (rotated
 * already: do not reveal the second token).
 */
export const GovernanceRecordTokenRotationRequest = z.strictObject({
  revoked: z.strictObject({
    token_id: Name.optional().describe('jti of the presented token, when it has one'),
    fingerprint: TokenFingerprint,
    expires_at: Instant.describe('exp of the presented token'),
  }),
  issued: z.strictObject({
    token_id: Name.describe('jti of the new token'),
    fingerprint: TokenFingerprint,
    expires_at: Instant,
  }),
});
export type GovernanceRecordTokenRotationRequest = z.infer<typeof GovernanceRecordTokenRotationRequest>;

/** The stored rotation. */
export const GovernanceRecordTokenRotationReply = z.object({
  rotation_id: z.string(),
  revoked_token_id: z.string().optional(),
  revoked_fingerprint: z.string().describe('sha256:<first 16 hex>'),
  issued_token_id: z.string(),
  rotated_at: z.string(),
  revocation_keys: z.array(z.string()),
  created: z.boolean().describe('false when this rotation had been recorded already'),
});
export type GovernanceRecordTokenRotationReply = z.infer<typeof GovernanceRecordTokenRotationReply>;

/** The refusals of an admission; each reason is also the ErrorCode the run fails with. */
const ADMISSION_REFUSALS = {
  budget_exceeded: {
    code: 'rate_limited',
    retryable: false,
    summary: "the tier's budget for the current period is spent; not retryable within the period",
  },
  rate_limited: {
    code: 'rate_limited',
    retryable: true,
    summary: "the tier's token bucket is short (fail policy, or a wait above max_wait_ms)",
  },
  max_tokens_exceeded: {
    code: 'invalid_request',
    retryable: false,
    summary: "requested_max_tokens above the tier's cap under the refuse policy",
  },
  model_not_allowed: {
    code: 'invalid_request',
    retryable: false,
    summary: "the model is not among the tier's models",
  },
} as const;

/** `_governance.admit_llm_call`: see {@link GovernanceAdmitLlmCallRequest}. */
export const GOVERNANCE_ADMIT_LLM_CALL = defineInternalEndpoint({
  name: '_governance.admit_llm_call',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceAdmitLlmCallRequest,
  reply: GovernanceAdmitLlmCallReply,
  refusals: ADMISSION_REFUSALS,
  summary: 'admits an LLM call (model, budget, max tokens, rate limit), recording the previous call first',
});

/** `_governance.record_cost`: see {@link GovernanceRecordCostRequest}. */
export const GOVERNANCE_RECORD_COST = defineInternalEndpoint({
  name: '_governance.record_cost',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceRecordCostRequest,
  reply: GovernanceRecordCostReply,
  refusals: {},
  summary: "adds an LLM call's cost to the tenant's spend, once per call_id",
});

/** `_governance.record_costs`: see {@link GovernanceRecordCostsRequest}. */
export const GOVERNANCE_RECORD_COSTS = defineInternalEndpoint({
  name: '_governance.record_costs',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceRecordCostsRequest,
  reply: GovernanceRecordCostsReply,
  refusals: {},
  summary: "adds several LLM calls' costs of one run to the tenant's spend, once per call_id",
});

/** `_governance.admission_posture`: see {@link GovernanceAdmissionPostureRequest}. */
export const GOVERNANCE_ADMISSION_POSTURE = defineInternalEndpoint({
  name: '_governance.admission_posture',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceAdmissionPostureRequest,
  reply: GovernanceAdmissionPostureReply,
  refusals: {},
  summary: 'which tiers admit every LLM call (no models list, budget, cap or rate limit)',
});

/** `_governance.failover`: see {@link GovernanceFailoverRequest}. */
export const GOVERNANCE_FAILOVER = defineInternalEndpoint({
  name: '_governance.failover',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceFailoverRequest,
  reply: GovernanceFailoverReply,
  refusals: {},
  summary: "records a provider failure and answers the next provider of the tier's failover chain",
});

/** `_governance.effective_overrides`: see {@link GovernanceEffectiveOverridesRequest}. */
export const GOVERNANCE_EFFECTIVE_OVERRIDES = defineInternalEndpoint({
  name: '_governance.effective_overrides',
  service: 'governance',
  callers: ['agent-registry'],
  gate: 'caller',
  request: GovernanceEffectiveOverridesRequest,
  reply: GovernanceEffectiveOverridesReply,
  refusals: {},
  summary: "the tenant's LLM overrides",
});

/** `_governance.provider_key`: see {@link GovernanceProviderKeyRequest}. */
export const GOVERNANCE_PROVIDER_KEY = defineInternalEndpoint({
  name: '_governance.provider_key',
  service: 'governance',
  callers: ['run-executor'],
  gate: 'caller',
  request: GovernanceProviderKeyRequest,
  reply: GovernanceProviderKeyReply,
  refusals: {
    no_key: { code: 'not_found', retryable: false, summary: 'no key is installed for the provider' },
    key_unreadable: {
      code: 'internal',
      retryable: false,
      summary: 'the key was sealed under another key-encryption key; rotate it again',
    },
  },
  summary: "the decrypted API key of a tenant's provider",
});

/** `_governance.record_token_rotation`: see {@link GovernanceRecordTokenRotationRequest}. */
export const GOVERNANCE_RECORD_TOKEN_ROTATION = defineInternalEndpoint({
  name: '_governance.record_token_rotation',
  service: 'governance',
  callers: ['gateway'],
  gate: 'admin',
  request: GovernanceRecordTokenRotationRequest,
  reply: GovernanceRecordTokenRotationReply,
  refusals: {
    already_rotated: {
      code: 'conflict',
      retryable: false,
      summary: 'the revoked token was rotated already to another token: do not reveal the new one',
    },
  },
  summary: "records auth.rotate_token's revocation and audit trail",
});

/**
 * What a sealed secret is for: `oauth_grant` (an OAuth access or refresh
 * token, or a registered client's secret, of an MCP server binding) or
 * `oauth_flow` (the PKCE code verifier of a pending authorization). Part of
 * the additional authenticated data: a record sealed for one purpose does
 * not open for another.
 */
export const SecretPurpose = z.enum(['oauth_grant', 'oauth_flow']);
export type SecretPurpose = z.infer<typeof SecretPurpose>;

/**
 * A secret sealed by governance (AES-256-GCM under its key-encryption key),
 * as its caller stores it: opaque base64 parts and the non-secret id of the
 * key that sealed it. Only governance opens it.
 */
export const SealedSecretView = z.strictObject({
  ciphertext: z.string().min(1).max(131_072),
  iv: z.string().min(1).max(64),
  tag: z.string().min(1).max(64),
  kek_id: z.string().min(1).max(64),
});
export type SealedSecretView = z.infer<typeof SealedSecretView>;

const SealContext = z
  .string()
  .min(1)
  .max(512)
  .describe(
    'what the secret is bound to, e.g. the binding id: a record sealed for one context does not open for another',
  );

/**
 * `_governance.seal_secret`: seals `secret` for (tenant, purpose, context)
 * under governance's key-encryption key, so that the caller (agent-registry,
 * which keeps OAuth grants) stores it without ever holding the key. The
 * tenant must be the calling identity's (403 `scope_mismatch`). The secret
 * is never logged.
 */
export const GovernanceSealSecretRequest = z.strictObject({
  tenant: Name,
  purpose: SecretPurpose,
  context: SealContext,
  secret: z.string().min(1).max(65_536),
});
export type GovernanceSealSecretRequest = z.infer<typeof GovernanceSealSecretRequest>;

/** The sealed record, to store as it is. */
export const GovernanceSealSecretReply = z.object({ sealed: SealedSecretView });
export type GovernanceSealSecretReply = z.infer<typeof GovernanceSealSecretReply>;

/**
 * `_governance.open_secret`: opens a record {@link GovernanceSealSecretRequest}
 * sealed, given the same tenant, purpose and context. A record sealed for
 * another tenant, purpose or context, tampered with, or sealed under another
 * key-encryption key is refused `unreadable`. Never log `secret`.
 */
export const GovernanceOpenSecretRequest = z.strictObject({
  tenant: Name,
  purpose: SecretPurpose,
  context: SealContext,
  sealed: SealedSecretView,
});
export type GovernanceOpenSecretRequest = z.infer<typeof GovernanceOpenSecretRequest>;

/** The secret in clear. */
export const GovernanceOpenSecretReply = z.object({ secret: z.string() });
export type GovernanceOpenSecretReply = z.infer<typeof GovernanceOpenSecretReply>;

/** `_governance.seal_secret`: see {@link GovernanceSealSecretRequest}. */
export const GOVERNANCE_SEAL_SECRET = defineInternalEndpoint({
  name: '_governance.seal_secret',
  service: 'governance',
  callers: ['agent-registry'],
  gate: 'caller',
  request: GovernanceSealSecretRequest,
  reply: GovernanceSealSecretReply,
  refusals: {},
  summary: "seals a secret for (tenant, purpose, context) under governance's key-encryption key",
});

/** `_governance.open_secret`: see {@link GovernanceOpenSecretRequest}. */
export const GOVERNANCE_OPEN_SECRET = defineInternalEndpoint({
  name: '_governance.open_secret',
  service: 'governance',
  callers: ['agent-registry'],
  gate: 'caller',
  request: GovernanceOpenSecretRequest,
  reply: GovernanceOpenSecretReply,
  refusals: {
    unreadable: {
      code: 'conflict',
      retryable: false,
      summary:
        'the record does not open: sealed for another tenant, purpose or context, tampered with, or under another key-encryption key',
    },
  },
  summary: 'opens a secret sealed by _governance.seal_secret',
});

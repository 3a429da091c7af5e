import { z } from 'zod';
import { Id, Timestamp, record } from './common.ts';

/** Reasoning-effort levels accepted by overrides and LLM parameters. */
export const ReasoningEffort = z.enum(['minimal', 'low', 'medium', 'high']);
export type ReasoningEffort = z.infer<typeof ReasoningEffort>;

/** Temperature range accepted everywhere (OpenAI-compatible). */
export const Temperature = z.number().min(0).max(2);

/**
 * LLM overrides (tenant overrides, run overrides). In a write, `null` clears
 * a member and an absent member is left unchanged.
 */
export const LlmOverrides = z.strictObject({
  model: z.string().min(1).max(256).nullable().optional(),
  temperature: Temperature.nullable().optional(),
  max_tokens: z.int().positive().nullable().optional(),
  reasoning_effort: ReasoningEffort.nullable().optional(),
  extra_instructions: z.string().max(16384).nullable().optional(),
});
export type LlmOverrides = z.infer<typeof LlmOverrides>;

/** LLM overrides as stored and returned: the members currently set. */
export const LlmOverridesView = record({
  model: z.string().optional(),
  temperature: z.number().optional(),
  max_tokens: z.int().optional(),
  reasoning_effort: z.string().optional(),
  extra_instructions: z.string().optional(),
});
export type LlmOverridesView = z.infer<typeof LlmOverridesView>;

/** Run overrides add `system_prompt` to the LLM overrides (runs.set_overrides). */
export const RunOverrides = LlmOverrides.extend({
  system_prompt: z.string().max(65536).nullable().optional(),
});
export type RunOverrides = z.infer<typeof RunOverrides>;

/** Run overrides as stored and returned. */
export const RunOverridesView = LlmOverridesView.extend({ system_prompt: z.string().optional() });
export type RunOverridesView = z.infer<typeof RunOverridesView>;

/** Budget periods. */
export const BudgetPeriod = z.enum(['day', 'month', 'total']);

/** A budget ceiling of a tier. */
export const Budget = z.strictObject({
  ceiling: z.number().nonnegative(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .default('USD')
    .describe('ISO 4217'),
  period: BudgetPeriod.default('month'),
});

/** What a rate-limit bucket meters: one token per LLM call, or the call's admitted `max_tokens`. */
export const RateLimitUnit = z.enum(['calls', 'tokens']);

/** What an LLM call does when its bucket is short: wait for the refill, or fail at once. */
export const RateLimitPolicy = z.enum(['wait', 'fail']);

/** The longest refill interval (31 days), so that `RefillEvery` in nanoseconds stays a safe integer. */
export const MAX_REFILL_EVERY_MS = 31 * 24 * 60 * 60 * 1000;

/**
 * A token bucket per (tenant, tier, model): `capacity` tokens, refilled by
 * `refill_tokens` every `refill_every_ms` milliseconds (in whole intervals).
 * `on_limit: wait` reserves the tokens and tells the caller how long to wait
 * (refused when that exceeds `max_wait_ms`); `fail` refuses at once.
 */
export const RateLimit = z.strictObject({
  capacity: z.int().positive(),
  refill_tokens: z.int().positive(),
  refill_every_ms: z.int().positive().max(MAX_REFILL_EVERY_MS),
  unit: RateLimitUnit.default('calls').describe("calls: 1 per LLM call; tokens: the call's admitted max_tokens"),
  on_limit: RateLimitPolicy.default('wait').describe('wait: reserve and delay the call; fail: refuse it'),
  max_wait_ms: z
    .int()
    .nonnegative()
    .max(MAX_REFILL_EVERY_MS)
    .default(60_000)
    .describe('wait policy: longest delay granted before the call is refused; default 60000'),
});

/** What happens to an LLM call asking for more than the tier's `max_tokens`: clipped to the cap, or refused. */
export const MaxTokensPolicy = z.enum(['clip', 'refuse']);

/** One provider of a tier's failover chain (the key lives in governance, by `name`). */
export const FailoverProvider = z.strictObject({
  name: z.string().min(1).max(128).describe('provider installation name (the name governance.rotate_key uses)'),
  kind: z.string().min(1).max(64).describe('provider kind: scripted | openai | …'),
  base_url: z.url().optional().describe('openai: the chat-completions server'),
  model: z.string().min(1).max(256).optional().describe("model to call on this provider; absent: the run's model"),
});

/** A governance tier as written by governance.set_posture and returned by governance.posture. */
export const GovernanceTier = z.strictObject({
  name: z.string().min(1).max(128),
  models: z.array(z.string().min(1)).max(100).optional().describe('models allowed in this tier; absent: any'),
  budget: Budget.optional(),
  max_tokens: z.int().positive().optional().describe('cap per LLM call'),
  max_tokens_policy: MaxTokensPolicy.default('clip').describe('above the cap: clip the call to it, or refuse it'),
  rate_limit: RateLimit.optional(),
  failover: z
    .array(FailoverProvider)
    .max(16)
    .optional()
    .describe('providers in failover order; the first is the primary'),
});
export type GovernanceTier = z.infer<typeof GovernanceTier>;

/** Spend of a tenant against one tier's budget in the current period. */
export const BudgetUsage = record({
  tier: z.string(),
  spent: z.number().nonnegative(),
  ceiling: z.number().nonnegative(),
  currency: z.string(),
  period: z.string(),
  period_start: Timestamp.optional(),
});
export type BudgetUsage = z.infer<typeof BudgetUsage>;

/** One LLM provider as seen by llm.posture (never the key, only its fingerprint). */
export const LlmProviderPosture = record({
  name: z.string(),
  kind: z.string().describe('scripted | openai | …'),
  models: z.array(z.string()),
  inference_broker: z.string().optional(),
  key_fingerprint: z.string().optional(),
  healthy: z.boolean().optional(),
});
export type LlmProviderPosture = z.infer<typeof LlmProviderPosture>;

/** The target tenant of a governance admin call; absent means the caller's own tenant. */
export const TargetTenant = Id.optional().describe("target tenant; absent: the caller's own");

export type Temperature = z.infer<typeof Temperature>;
export type BudgetPeriod = z.infer<typeof BudgetPeriod>;
export type Budget = z.infer<typeof Budget>;
export type RateLimit = z.infer<typeof RateLimit>;
export type RateLimitUnit = z.infer<typeof RateLimitUnit>;
export type RateLimitPolicy = z.infer<typeof RateLimitPolicy>;
export type MaxTokensPolicy = z.infer<typeof MaxTokensPolicy>;
export type FailoverProvider = z.infer<typeof FailoverProvider>;
export type TargetTenant = z.infer<typeof TargetTenant>;

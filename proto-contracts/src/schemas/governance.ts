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

/** A token bucket: `capacity` tokens, refilled by `refill_tokens` every `refill_every_ms` milliseconds. */
export const RateLimit = z.strictObject({
  capacity: z.int().positive(),
  refill_tokens: z.int().positive(),
  refill_every_ms: z.int().positive(),
});

/** A governance tier as written by governance.set_posture and returned by governance.posture. */
export const GovernanceTier = z.strictObject({
  name: z.string().min(1).max(128),
  models: z.array(z.string().min(1)).max(100).optional().describe('models allowed in this tier; absent: any'),
  budget: Budget.optional(),
  max_tokens: z.int().positive().optional().describe('cap per LLM call'),
  rate_limit: RateLimit.optional(),
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
export type TargetTenant = z.infer<typeof TargetTenant>;

import { z } from 'zod';
import { ApprovalPolicy } from '@ars/contracts';

/**
 * The engine's environment variables, spread into `RunExecutorConfig` (read
 * once by config.ts, like every other variable).
 */

const ms = (fallback: number, min: number, max: number, what: string) =>
  z.coerce.number().int().min(min).max(max).default(fallback).describe(what);

/** TOOL_APPROVAL_POLICIES: a JSON object, tool name → approval policy. */
const ApprovalOverrides = z
  .string()
  .default('{}')
  .transform((text, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }
    const parsed = z.record(z.string().min(1), ApprovalPolicy).safeParse(value);
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: `must map tool names to approval policies: ${parsed.error.message}` });
      return z.NEVER;
    }
    return parsed.data;
  })
  .describe(
    'Approval policy overrides by tool name, as JSON: {"<tool>": {"mode": "always"|"never", "timeout_seconds"?: n, "on_timeout"?: "reject"|"approve"}}. Default {}.',
  );

export const ENGINE_CONFIG_SHAPE = {
  EXECUTOR_DRAIN_GRACE_MS: ms(
    20_000,
    0,
    600_000,
    'On SIGTERM, how long in-flight runs may take to finish before they are checkpointed and handed back to the queue, in ms. Default 20000.',
  ),
  EXECUTOR_ACK_WAIT_MS: ms(
    30_000,
    1_000,
    600_000,
    'Ack wait of the RUNS consumers: a run whose executor stops heartbeating is redelivered after it, in ms. Default 30000.',
  ),
  EXECUTOR_LEASE_TTL_MS: ms(
    30_000,
    1_000,
    600_000,
    'Lifetime of a run lease in KV ars_leases, refreshed by its holder every third of it, in ms. Default 30000.',
  ),
  RUN_MAX_STEPS: ms(
    25,
    1,
    10_000,
    'Planner steps a run may take; one more fails it with max_steps_exceeded. Default 25.',
  ),
  AGENT_CONFIG_CACHE_MS: ms(
    5_000,
    0,
    600_000,
    'How long a resolved agent configuration is reused before agent-registry is asked again, in ms. Default 5000.',
  ),
  LLM_TIMEOUT_MS: ms(120_000, 1_000, 3_600_000, 'Per-request timeout of openai provider calls, in ms. Default 120000.'),
  LLM_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('API key of openai providers whose agent configuration carries none. Unset: a placeholder key.'),
  TOOL_APPROVAL_POLICIES: ApprovalOverrides,
};

/** The engine's slice of the service configuration. */
export interface EngineSettings {
  readonly concurrency: number;
  readonly drainGraceMs: number;
  readonly ackWaitMs: number;
  readonly leaseTtlMs: number;
  readonly maxSteps: number;
  readonly agentConfigCacheMs: number;
  readonly llmTimeoutMs: number;
  readonly llmApiKey?: string | undefined;
  readonly approvalOverrides: Readonly<Record<string, ApprovalPolicy>>;
  readonly defaultAgentId: string;
}

/** Reads the engine settings out of the service configuration. */
export function engineSettingsOf(config: {
  readonly EXECUTOR_CONCURRENCY: number;
  readonly DEFAULT_AGENT_ID: string;
  readonly EXECUTOR_DRAIN_GRACE_MS: number;
  readonly EXECUTOR_ACK_WAIT_MS: number;
  readonly EXECUTOR_LEASE_TTL_MS: number;
  readonly RUN_MAX_STEPS: number;
  readonly AGENT_CONFIG_CACHE_MS: number;
  readonly LLM_TIMEOUT_MS: number;
  readonly LLM_API_KEY?: string | undefined;
  readonly TOOL_APPROVAL_POLICIES: Readonly<Record<string, ApprovalPolicy>>;
}): EngineSettings {
  return {
    concurrency: config.EXECUTOR_CONCURRENCY,
    drainGraceMs: config.EXECUTOR_DRAIN_GRACE_MS,
    ackWaitMs: config.EXECUTOR_ACK_WAIT_MS,
    leaseTtlMs: config.EXECUTOR_LEASE_TTL_MS,
    maxSteps: config.RUN_MAX_STEPS,
    agentConfigCacheMs: config.AGENT_CONFIG_CACHE_MS,
    llmTimeoutMs: config.LLM_TIMEOUT_MS,
    llmApiKey: config.LLM_API_KEY,
    approvalOverrides: config.TOOL_APPROVAL_POLICIES,
    defaultAgentId: config.DEFAULT_AGENT_ID,
  };
}

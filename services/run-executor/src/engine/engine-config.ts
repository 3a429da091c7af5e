import { z } from 'zod';
import { ApprovalPolicy } from '@ars/contracts';
import { CREDENTIAL_BROKER_CONFIG_SHAPE, credentialBrokerOptionsOf } from '@ars/service-kit';
import type { CredentialBrokerOptions } from '@ars/service-kit';

/**
 * The engine's environment variables, spread into `RunExecutorConfig` (read
 * once by config.ts, like every other variable).
 */

const int = (fallback: number, min: number, max: number, what: string) =>
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
    'Approval policy overrides by tool name (built-in or MCP, `<server_id>__<tool>`), as JSON: {"<tool>": {"mode": "always"|"never", "timeout_seconds"?: n, "on_timeout"?: "reject"|"approve"}}. Precedence, lowest first: the tool\'s own policy (manifest or MCP catalogue), this, the tenant\'s policy (tools.set_approval_policy). Default {}.',
  );

/** LLM_PRICES: a JSON object, model → USD per million input and output tokens. */
const LlmPrices = z
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
    const Price = z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() });
    const parsed = z.record(z.string().min(1), Price).safeParse(value);
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: `must map models to {input, output}: ${parsed.error.message}` });
      return z.NEVER;
    }
    return parsed.data;
  })
  .describe(
    'Prices of models whose provider reports no cost, in USD per million tokens, as JSON: {"<model>": {"input": n, "output": n}}. Default {} (such calls cost 0).',
  );

export const ENGINE_CONFIG_SHAPE = {
  EXECUTOR_DRAIN_GRACE_MS: int(
    20_000,
    0,
    600_000,
    'On SIGTERM, how long in-flight runs may take to finish before they are checkpointed and handed back to the queue, in ms. Default 20000.',
  ),
  EXECUTOR_DRAIN_UNSAFE_CALL_MS: int(
    20_000,
    0,
    600_000,
    'On SIGTERM, how much longer than EXECUTOR_DRAIN_GRACE_MS an unsafe tool call in flight may take: it is not aborted by the hand-back, its outcome is checkpointed and the run handed back after it; a call still running then is aborted (the next executor fails its run tool_outcome_unknown). In ms. Default 20000.',
  ),
  EXECUTOR_ACK_WAIT_MS: int(
    30_000,
    1_000,
    600_000,
    'Ack wait of the RUNS consumers: a run whose executor stops heartbeating is redelivered after it, in ms. Default 30000.',
  ),
  EXECUTOR_LEASE_TTL_MS: int(
    30_000,
    1_000,
    600_000,
    'Lifetime of a run lease (collection run_leases of the task store), extended by its holder every third of it, in ms. Default 30000.',
  ),
  EXECUTOR_STALE_RUN_MS: int(
    60_000,
    1_000,
    3_600_000,
    'How long a run may stay pending while nothing on the run queue waits for delivery before its queue message counts as lost (a publish a NATS failover dropped) and the run is queued again, in ms; set it above EXECUTOR_ACK_WAIT_MS. Checked every quarter of it. Default 60000.',
  ),
  RUN_MAX_STEPS: int(
    25,
    1,
    10_000,
    'Planner steps a run may take; one more fails it with max_steps_exceeded. Default 25.',
  ),
  AGENT_CONFIG_CACHE_MS: int(
    60_000,
    0,
    600_000,
    "How long a run's resolved effective configuration is reused at most for the same (tenant, user, session, agent), in ms. A configuration change announced by agent-registry or governance drops every kept one at once, and so does a drop of the executor's NATS connection; the bound covers a notice lost otherwise. 0: every run resolves its own (concurrent identical resolutions share one call). Default 60000.",
  ),
  GOVERNANCE_POSTURE_CACHE_MS: int(
    60_000,
    0,
    600_000,
    "How long governance's answer of which tiers admit every LLM call (no models list, budget, max-tokens cap or rate limit) is kept, in ms; calls of those tiers are admitted without asking governance, and their costs sent together. A posture write announced by governance drops it at once, and so does a drop of the executor's NATS connection; the bound covers a notice lost otherwise. 0: every LLM call asks governance. Default 60000.",
  ),
  ENGINE_RPC_TIMEOUT_MS: int(
    2_000,
    50,
    60_000,
    'How long the engine waits for agent-registry, governance, memory and artifact calls, in ms. Default 2000.',
  ),
  LLM_DEFAULT_MAX_TOKENS: int(
    4_096,
    1,
    10_000_000,
    "Max tokens an LLM call asks for (and governance admits) when the run's llm_params set none. Default 4096.",
  ),
  LLM_PRICES: LlmPrices,
  INLINE_ARTIFACT_MAX_BYTES: int(
    16_384,
    0,
    1_048_576,
    'Largest text input artifact an inline disposition puts into the prompt, in bytes; larger degrades to ref. Default 16384.',
  ),
  ARTIFACT_TOOL_READ_MAX_BYTES: int(
    65_536,
    1,
    4_194_304,
    'Most bytes the artifact_read tool returns per call. Default 65536.',
  ),
  ARTIFACT_TOOL_WRITE_MAX_BYTES: int(
    1_048_576,
    1,
    67_108_864,
    'Largest artifact the artifact_write tool stores, in bytes. Default 1048576.',
  ),
  LLM_TIMEOUT_MS: int(
    120_000,
    1_000,
    3_600_000,
    'Timeout of openai provider calls, in ms: for the response headers, then for each wait of the streamed body (to the first chunk, between chunks); the whole body may take 10 times it. Default 120000.',
  ),
  LLM_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Key of openai providers for which governance holds no tenant key (governance.rotate_key under the provider's name). Unset: a placeholder key.",
    ),
  TOOL_APPROVAL_POLICIES: ApprovalOverrides,
  PLANNER_REPAIR_MAX: int(
    2,
    0,
    20,
    'How many consecutive invalid tool calls (arguments its JSON Schema refuses, or an unknown tool) a run feeds back to the model for repair; the next one is planner.repair_exhausted and fails the run llm_error. A valid call resets the count. Default 2.',
  ),
  LLM_CONTEXT_WINDOW_TOKENS: int(
    0,
    0,
    10_000_000,
    "The context window of every run's model, in tokens; 0: the model's entry in the engine's table (engine/context-window.ts), else 128000. Default 0.",
  ),
  LLM_CONTEXT_RESERVE: z.coerce
    .number()
    .min(0)
    .max(0.9)
    .default(0.2)
    .describe(
      'The part of the context window kept free for the answer: a prompt estimated above window × (1 − reserve) is llm.context_window_exceeded and the trajectory is compressed. Default 0.2.',
    ),
  MCP_CALL_TIMEOUT_MS: int(
    60_000,
    100,
    3_600_000,
    "How long an MCP tool call may take (the tool host's timeout_ms of `_mcp.call_tool`; the engine waits ENGINE_RPC_TIMEOUT_MS longer for the host's answer), in ms. A call that takes longer fails with ErrorClass timeout and is retried if the tool is read-only or idempotent. Default 60000.",
  ),
  COMPLETION_HOOK_TIMEOUT_MS: int(
    10_000,
    100,
    600_000,
    "How long an agent's completion hook (agent_config completion_hook) may run after the run's terminal event, in ms; past it the hook is abandoned with run.hook_failed ErrorClass timeout. Default 10000.",
  ),
  PAUSE_PAYLOAD_ARTIFACT_BYTES: int(
    16_384,
    256,
    1_048_576,
    "Largest pause payload (an approval's arguments, a pause control's payload) kept inline in its pause record, in bytes of JSON; a larger one is stored as an artifact and referenced (pause.payload_artifact_routed). Default 16384.",
  ),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe(
      "true: each LLM call's span carries the prompt and the answer (gen_ai.system_instructions, gen_ai.input.messages, gen_ai.output.messages; images as references, never bytes). Default false: no user content in any span.",
    ),
  // Inference brokers (an agent's llm_provider.inference_broker): CREDENTIAL_BROKER_TOKEN, BROKER_TIMEOUT_MS, BROKER_ALLOW_INSECURE.
  ...CREDENTIAL_BROKER_CONFIG_SHAPE,
};

/** The engine's slice of the service configuration. */
export interface EngineSettings {
  readonly concurrency: number;
  readonly drainGraceMs: number;
  readonly drainUnsafeCallMs: number;
  readonly ackWaitMs: number;
  readonly leaseTtlMs: number;
  readonly staleRunMs: number;
  readonly maxSteps: number;
  readonly agentConfigCacheMs: number;
  readonly governancePostureCacheMs: number;
  readonly rpcTimeoutMs: number;
  readonly defaultMaxTokens: number;
  readonly llmPrices: Readonly<Record<string, { readonly input: number; readonly output: number }>>;
  readonly inlineArtifactMaxBytes: number;
  readonly artifactReadMaxBytes: number;
  readonly artifactWriteMaxBytes: number;
  readonly llmTimeoutMs: number;
  readonly llmApiKey?: string | undefined;
  readonly approvalOverrides: Readonly<Record<string, ApprovalPolicy>>;
  readonly mcpCallTimeoutMs: number;
  /** How long a completion hook may run, in ms (COMPLETION_HOOK_TIMEOUT_MS). */
  readonly completionHookTimeoutMs: number;
  /** Largest inline pause payload, in bytes (PAUSE_PAYLOAD_ARTIFACT_BYTES). */
  readonly pausePayloadArtifactBytes: number;
  readonly defaultAgentId: string;
  /** Consecutive invalid tool calls fed back before the run fails (PLANNER_REPAIR_MAX). */
  readonly repairMax: number;
  /** The context window of every model, in tokens; 0: the table's (LLM_CONTEXT_WINDOW_TOKENS). */
  readonly contextWindowTokens: number;
  /** Part of the window kept for the answer (LLM_CONTEXT_RESERVE). */
  readonly contextReserve: number;
  /** LLM spans carry the prompt and the answer (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
  readonly captureLlmContent: boolean;
  /** How the engine asks inference brokers. */
  readonly broker: Pick<CredentialBrokerOptions, 'token' | 'timeoutMs' | 'allowInsecure'>;
}

/** Reads the engine settings out of the service configuration. */
export function engineSettingsOf(config: {
  readonly EXECUTOR_CONCURRENCY: number;
  readonly DEFAULT_AGENT_ID: string;
  readonly EXECUTOR_DRAIN_GRACE_MS: number;
  readonly EXECUTOR_DRAIN_UNSAFE_CALL_MS: number;
  readonly EXECUTOR_ACK_WAIT_MS: number;
  readonly EXECUTOR_LEASE_TTL_MS: number;
  readonly EXECUTOR_STALE_RUN_MS: number;
  readonly RUN_MAX_STEPS: number;
  readonly AGENT_CONFIG_CACHE_MS: number;
  readonly GOVERNANCE_POSTURE_CACHE_MS: number;
  readonly ENGINE_RPC_TIMEOUT_MS: number;
  readonly LLM_DEFAULT_MAX_TOKENS: number;
  readonly LLM_PRICES: Readonly<Record<string, { readonly input: number; readonly output: number }>>;
  readonly INLINE_ARTIFACT_MAX_BYTES: number;
  readonly ARTIFACT_TOOL_READ_MAX_BYTES: number;
  readonly ARTIFACT_TOOL_WRITE_MAX_BYTES: number;
  readonly LLM_TIMEOUT_MS: number;
  readonly LLM_API_KEY?: string | undefined;
  readonly TOOL_APPROVAL_POLICIES: Readonly<Record<string, ApprovalPolicy>>;
  readonly MCP_CALL_TIMEOUT_MS: number;
  readonly COMPLETION_HOOK_TIMEOUT_MS: number;
  readonly PAUSE_PAYLOAD_ARTIFACT_BYTES: number;
  readonly PLANNER_REPAIR_MAX: number;
  readonly LLM_CONTEXT_WINDOW_TOKENS: number;
  readonly LLM_CONTEXT_RESERVE: number;
  readonly CREDENTIAL_BROKER_TOKEN?: string | undefined;
  readonly BROKER_TIMEOUT_MS: number;
  readonly BROKER_ALLOW_INSECURE: boolean;
  readonly OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: boolean;
}): EngineSettings {
  return {
    concurrency: config.EXECUTOR_CONCURRENCY,
    drainGraceMs: config.EXECUTOR_DRAIN_GRACE_MS,
    drainUnsafeCallMs: config.EXECUTOR_DRAIN_UNSAFE_CALL_MS,
    ackWaitMs: config.EXECUTOR_ACK_WAIT_MS,
    leaseTtlMs: config.EXECUTOR_LEASE_TTL_MS,
    staleRunMs: config.EXECUTOR_STALE_RUN_MS,
    maxSteps: config.RUN_MAX_STEPS,
    agentConfigCacheMs: config.AGENT_CONFIG_CACHE_MS,
    governancePostureCacheMs: config.GOVERNANCE_POSTURE_CACHE_MS,
    rpcTimeoutMs: config.ENGINE_RPC_TIMEOUT_MS,
    defaultMaxTokens: config.LLM_DEFAULT_MAX_TOKENS,
    llmPrices: config.LLM_PRICES,
    inlineArtifactMaxBytes: config.INLINE_ARTIFACT_MAX_BYTES,
    artifactReadMaxBytes: config.ARTIFACT_TOOL_READ_MAX_BYTES,
    artifactWriteMaxBytes: config.ARTIFACT_TOOL_WRITE_MAX_BYTES,
    llmTimeoutMs: config.LLM_TIMEOUT_MS,
    llmApiKey: config.LLM_API_KEY,
    approvalOverrides: config.TOOL_APPROVAL_POLICIES,
    mcpCallTimeoutMs: config.MCP_CALL_TIMEOUT_MS,
    completionHookTimeoutMs: config.COMPLETION_HOOK_TIMEOUT_MS,
    pausePayloadArtifactBytes: config.PAUSE_PAYLOAD_ARTIFACT_BYTES,
    defaultAgentId: config.DEFAULT_AGENT_ID,
    repairMax: config.PLANNER_REPAIR_MAX,
    contextWindowTokens: config.LLM_CONTEXT_WINDOW_TOKENS,
    contextReserve: config.LLM_CONTEXT_RESERVE,
    captureLlmContent: config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    broker: credentialBrokerOptionsOf(config),
  };
}

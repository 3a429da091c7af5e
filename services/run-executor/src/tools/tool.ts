import type { z } from 'zod';
import type { ApprovalPolicy, SideEffectClass } from '@ars/contracts';
import { setTimeout as wait } from 'node:timers/promises';

/**
 * What a tool is to the engine: a name, an argument schema, a side-effect
 * class (decides what a redelivered run may repeat), a retry policy and an
 * approval policy.
 */

/** Error classes of a failed attempt (`tool.failed` ErrorClass, `tool.policy_exhausted` LastClass). */
export const TOOL_ERROR_CLASSES = ['transient', 'permanent', 'timeout', 'cancelled'] as const;
export type ToolErrorClass = (typeof TOOL_ERROR_CLASSES)[number];

/** A tool's failure; `transient` and `timeout` attempts are retried per the tool's policy. */
export class ToolError extends Error {
  readonly errorClass: ToolErrorClass;
  constructor(errorClass: ToolErrorClass, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolError';
    this.errorClass = errorClass;
  }
}

/** True when an attempt that failed with `errorClass` may be retried. */
export function isRetryable(errorClass: ToolErrorClass): boolean {
  return errorClass === 'transient' || errorClass === 'timeout';
}

/** Retry policy: attempts in all (1 = no retry) and the pause between attempts. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  /** Doubles after each failed attempt. */
  readonly backoffMs: number;
}

/** The run's owner: whose memory and artifacts a tool reads and writes. */
export interface ToolOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** What one attempt receives. */
export interface ToolContext {
  readonly taskId: string;
  /** The run's owner triple; tools act as it (never with more scopes). */
  readonly owner: ToolOwner;
  readonly callId: string;
  /** 1-based. */
  readonly attempt: number;
  /**
   * Aborted by a hard cancel, a lost lease or a drain's hand-back: stop at
   * once. An unsafe tool's call is not aborted by a hand-back until the
   * drain's allowance for it ends (`EXECUTOR_DRAIN_UNSAFE_CALL_MS`).
   */
  readonly signal: AbortSignal;
  /** True once the run is cancelled (soft or hard): a tool that waits on other work stops and winds it down. */
  readonly cancelled?: () => boolean;
  /** Told of result parts the tool host stored as artifacts (`_tools.record_calls` artifacts_offloaded). */
  readonly countOffloaded?: (artifacts: number) => void;
}

/** A tool the planner may call. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** `tool.*` Transport: `builtin`, or the MCP transport (`stdio`, `streamable_http`, `sse`). */
  readonly transport: string;
  /** Where the tool comes from: `builtin`, or the MCP server id (what `source_disables` names). @default 'builtin' */
  readonly source?: string;
  readonly sideEffect: SideEffectClass;
  readonly retry: RetryPolicy;
  readonly approval: ApprovalPolicy;
  readonly tags: readonly string[];
  /** Validates (and may default) the arguments; a failure is `tool.invalid_args`. */
  readonly args: z.ZodType<Record<string, unknown>>;
  /**
   * The JSON Schema a provider sees, when the tool declares one as such (an
   * MCP tool: its server's schema, as given); absent, it is generated from `args`.
   */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Returns the output text fed back to the planner; throws {@link ToolError} to fail. */
  run(args: Record<string, unknown>, context: ToolContext): Promise<string>;
}

/** Resolves after `ms`, or rejects with ToolError `cancelled` when `signal` aborts first. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await wait(ms, undefined, { signal }).catch(() => {
    throw new ToolError('cancelled', 'aborted');
  });
}

/** Where `tool` comes from: `builtin`, or its MCP server id. */
export function sourceOf(tool: Pick<ToolDefinition, 'source'>): string {
  return tool.source ?? 'builtin';
}

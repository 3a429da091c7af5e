import { contextPayload } from '../domain/task.ts';
import type { ContextEntry } from '../domain/task.ts';
import type { ChatMessage, Decision } from '../providers/provider.ts';
import type { SessionTurn } from '../store/run-state.repository.ts';
import type { ToolDefinition } from '../tools/tool.ts';

/**
 * The planner's pure rules: how a step's prompt is assembled, how a decision
 * becomes trajectory messages, and the run's ErrorCodes. No I/O here.
 */

/** `task.failed` ErrorCodes the engine produces. */
export const RUN_ERROR_CODES = {
  /** The run used its maximum number of planner steps without finishing. */
  maxStepsExceeded: 'max_steps_exceeded',
  /** A human rejected a gated tool call (the spec's "constraints conflict"). */
  constraintsConflict: 'constraints_conflict',
  /** An approval wait ended by the tool's timeout with `on_timeout: reject`. */
  approvalTimeout: 'approval_timeout',
  /** An unsafe tool call started before a crash and has no recorded outcome; it is never retried blindly. */
  toolOutcomeUnknown: 'tool_outcome_unknown',
  /** The LLM provider failed (network, server error, malformed script) and no failover provider was left. */
  llmError: 'llm_error',
  /** The run's agent no longer resolves at its claim (retired or gone since the start). */
  agentUnavailable: 'agent_unavailable',
  /** Governance refused an LLM call: the tier's budget is spent (never retried). */
  budgetExceeded: 'budget_exceeded',
  /** Governance refused an LLM call: rate limit with the `fail` policy, or a wait above `max_wait_ms`. */
  rateLimited: 'rate_limited',
  /** Governance refused an LLM call: max tokens above the tier's cap under the `refuse` policy. */
  maxTokensExceeded: 'max_tokens_exceeded',
  /** Governance refused an LLM call: the model is not in the tier's list. */
  modelNotAllowed: 'model_not_allowed',
  /** Anything else: a bug or an unreachable store. */
  internal: 'internal',
} as const;
export type RunErrorCode = (typeof RUN_ERROR_CODES)[keyof typeof RUN_ERROR_CODES];

/** `planner.decision` DecisionKind values. */
export const DECISION_KINDS = { toolCall: 'ToolCall', finish: 'Finish' } as const;

/** Longest tool output fed back to the model, in characters. */
export const MAX_TOOL_OUTPUT_CHARS = 16_384;
/** Longest string kept in an `ArgsSummary`, in characters. */
const SUMMARY_STRING_CHARS = 200;

/**
 * The system prompt of a step: the agent's layers, then the run's context
 * sections (caller memory, input artifacts; empty ones left out), then the
 * current goal.
 */
export function systemPrompt(agentSystem: string, goal: string, sections: readonly string[] = []): string {
  return [agentSystem, ...sections, `Goal: ${goal}`].filter((part) => part !== '').join('\n\n');
}

/** The session's earlier turns as user/assistant pairs, oldest first. */
export function historyMessages(turns: readonly SessionTurn[], currentTaskId: string): ChatMessage[] {
  return turns
    .filter((t) => t.task_id !== currentTaskId)
    .flatMap((t): ChatMessage[] => [
      { role: 'user', content: t.query },
      { role: 'assistant', content: t.answer },
    ]);
}

/** Injected context and user messages as prompt messages. */
export function inputMessages(entries: readonly ContextEntry[]): ChatMessage[] {
  return entries.map((entry): ChatMessage => {
    if (entry.kind === 'user_message') {
      const payload = contextPayload(entry) as { message?: unknown } | undefined;
      return { role: 'user', content: typeof payload?.message === 'string' ? payload.message : '' };
    }
    return { role: 'system', content: `Operator context: ${JSON.stringify(contextPayload(entry))}` };
  });
}

/** The messages a step sends: history, the query, then the run's trajectory. */
export function promptMessages(
  history: readonly ChatMessage[],
  query: string,
  trajectory: readonly ChatMessage[],
): ChatMessage[] {
  return [...history, { role: 'user', content: query }, ...trajectory];
}

/** The assistant message recording a tool-call decision. */
export function toolCallMessage(decision: Extract<Decision, { kind: 'tool_call' }>, reasoning: string): ChatMessage {
  return {
    role: 'assistant',
    content: reasoning,
    tool_call: { id: decision.callId, name: decision.tool, args: decision.args ?? {} },
  };
}

/** The tool message answering a call with its output or its error. */
export function toolResultMessage(
  callId: string,
  outcome: { readonly ok: true; readonly output: string } | { readonly ok: false; readonly error: string },
): ChatMessage {
  const text = outcome.ok ? outcome.output : `error: ${outcome.error}`;
  return {
    role: 'tool',
    tool_call_id: callId,
    content: text.length > MAX_TOOL_OUTPUT_CHARS ? `${text.slice(0, MAX_TOOL_OUTPUT_CHARS)}…` : text,
  };
}

/** The outcome of checking a tool call against the registry. */
export type CallCheck =
  | { readonly ok: true; readonly tool: ToolDefinition; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly error: string };

/** Checks that the tool exists, is exposed, and that its arguments are valid. */
export function checkToolCall(
  decision: Extract<Decision, { kind: 'tool_call' }>,
  exposed: ReadonlyMap<string, ToolDefinition>,
): CallCheck {
  const tool = exposed.get(decision.tool);
  if (tool === undefined) return { ok: false, error: `unknown tool: ${decision.tool}` };
  if (decision.args === undefined) return { ok: false, error: 'arguments are not a JSON object' };
  const parsed = tool.args.safeParse(decision.args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
    return { ok: false, error: `${where}${issue?.message ?? 'invalid arguments'}` };
  }
  return { ok: true, tool, args: parsed.data };
}

/** A bounded copy of tool arguments for events and pause records (long strings cut, depth limited). */
export function argsSummary(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.length > SUMMARY_STRING_CHARS ? `${value.slice(0, SUMMARY_STRING_CHARS)}…` : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= 3) return '…';
  if (Array.isArray(value)) return value.slice(0, 10).map((v) => argsSummary(v, depth + 1));
  const entries = Object.entries(value).slice(0, 20);
  return Object.fromEntries(entries.map(([k, v]) => [k, argsSummary(v, depth + 1)]));
}

/** True once `stepsDone` planner steps leave no room for another under `maxSteps`. */
export function stepLimitReached(stepsDone: number, maxSteps: number): boolean {
  return stepsDone >= maxSteps;
}

/** The last tool the trajectory called (`planner.max_steps_exceeded` LastTool). */
export function lastToolOf(trajectory: readonly ChatMessage[]): string {
  for (let i = trajectory.length - 1; i >= 0; i--) {
    const call = trajectory[i]?.tool_call;
    if (call !== undefined) return call.name;
  }
  return '';
}

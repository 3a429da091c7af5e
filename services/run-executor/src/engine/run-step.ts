import { BACKGROUND_KIND } from '../domain/task.ts';
import { ContextLengthExceeded } from '../providers/provider.ts';
import type { Decision, CompletionResult } from '../providers/provider.ts';
import { isAuthRequired } from '../tools/mcp-output.ts';
import { invokeWithPolicy } from '../tools/registry.ts';
import { SERVICE_TOOL_NAMES } from '../tools/service-tools.ts';
import { sourceOf } from '../tools/tool.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { awaitApproval } from './approval.ts';
import { awaitAuthorization } from './auth-wait.ts';
import { createChunkStream } from './chunk-stream.ts';
import { guardPromptContent } from './context-leak.ts';
import { withToolSpan } from './call-spans.ts';
import { governedCompletion, ProviderFailure } from './llm-call.ts';
import { applyPendingPatch } from './run-patches.ts';
import { refreshMemory } from './run-prepare.ts';
import type { PreparedRun } from './run-prepare.ts';
import {
  checkToolCall,
  DECISION_KINDS,
  inputMessages,
  RUN_ERROR_CODES,
  toolCallMessage,
  toolResultMessage,
} from './planner.ts';
import { resetRepair } from './repair.ts';
import { fitContext, stepPrompt } from './run-context.ts';
import { occurredAt } from './run-events.ts';
import { finishRun } from './run-finish.ts';
import { repairInvalidCall, withoutExtraFields } from './run-repair.ts';
import type { RunState } from './run-state.ts';
import { withStepSpan } from './run-spans.ts';
import { callRecord } from './tool-call-reporter.ts';
import type { CallOutcome } from './tool-call-reporter.ts';

/**
 * One planner step of a run: take a mid-run patch of the session's run
 * overrides (`run-patches.ts`), consume new inputs, call the provider through
 * governance (`llm-call.ts`; its chunks streamed as `llm.completion.chunk`),
 * record the step's cost
 * (`recordStep`, then `llm.cost.recorded`) and the decision
 * (`planner.decision`), then either finish or call the tool: invalid
 * arguments are reported and fed back with repair guidance (`run-repair.ts`,
 * bounded), a prompt over the context window first compresses the
 * trajectory (`run-context.ts`), a gated tool waits for approval, an
 * unsafe call's intent is checkpointed before it starts, attempts follow the
 * tool's retry policy. An MCP call the host refuses `auth_required` (its
 * grant revoked or expired) waits for the user to authorize the server
 * (`auth-wait.ts`) and is made once more; refused again, it fails as a
 * permanent error. Every call's outcome goes to the tool call reporter
 * (`_tools.record_calls`). A step ends with its checkpoint.
 */

const MAX_TRACE_CHARS = 4_096;

export function runStep(run: RunState, prepared: PreparedRun): Promise<void> {
  return withStepSpan(run.checkpoint.step + 1, () => step(run, prepared));
}

async function step(run: RunState, prepared: PreparedRun): Promise<void> {
  await applyPendingPatch(run, prepared);
  const fresh = run.context.slice(run.checkpoint.inputs_consumed);
  if (fresh.length > 0) {
    const messages = inputMessages(fresh).map((message, i) => ({
      ...message,
      content: guardPromptContent(run, prepared, fresh[i]?.kind ?? 'inject_context', message.content),
    }));
    run.checkpoint.messages.push(...messages);
    run.checkpoint.inputs_consumed = run.context.length;
  }
  const stepNo = run.checkpoint.step + 1;
  const result = await fittedCompletion(run, prepared, stepNo);
  if (result === undefined) return;
  const { decision } = result;
  // No later call will carry the cost of the last one: it goes out alongside the step's recording.
  if (decision.kind === 'finish') run.costs.sendHeld();
  await run.deps.tasks.recordStep(run.taskId, {
    index: stepNo,
    cost_usd: result.costUsd,
    tokens_in: result.usage.input_tokens,
    tokens_out: result.usage.output_tokens,
    model: result.model,
    ...(decision.kind === 'tool_call' ? { tool: decision.tool } : {}),
  });
  run.checkpoint.cost_usd += result.costUsd;
  emitDecision(run, result);
  if (decision.kind === 'finish') {
    run.checkpoint.messages.push({ role: 'assistant', content: decision.answer });
    run.checkpoint.step = stepNo;
    // The cost is with governance before anyone can see the run end and start the next one.
    await run.costs.flush();
    const notify = run.task.kind === BACKGROUND_KIND;
    await finishRun(run, { status: 'complete', notify_on_complete: notify }, decision.answer);
    return;
  }
  await toolStep(run, prepared, withoutExtraFields(run, prepared, decision), result.reasoning, stepNo, result.model);
}

/**
 * The step's call on a prompt that fits the context window; a provider
 * refusing it `context_length_exceeded` has the trajectory compressed and is
 * asked once more (refused again: `llm_error`). `undefined` when the run
 * ended or was interrupted.
 */
async function fittedCompletion(
  run: RunState,
  prepared: PreparedRun,
  stepNo: number,
): Promise<CompletionResult | undefined> {
  if (!(await fitContext(run, prepared))) return undefined;
  try {
    return await complete(run, prepared, stepNo);
  } catch (error) {
    if (!(error instanceof ContextLengthExceeded)) throw error;
    if (!(await fitContext(run, prepared, true))) return undefined;
  }
  try {
    return await complete(run, prepared, stepNo);
  } catch (error) {
    throw error instanceof ContextLengthExceeded ? new ProviderFailure(error) : error;
  }
}

/** One streamed, governed provider call; `undefined` when a cancellation or drain interrupted it. */
async function complete(run: RunState, prepared: PreparedRun, stepNo: number): Promise<CompletionResult | undefined> {
  if (prepared.memoryStale) await refreshMemory(run, prepared);
  const quad = run.events.quad;
  // RunID names the provider call the chunk belongs to (`<task>:<step>:<attempt>:<claim>`, as its cost's call_id):
  // a step re-run after a failover, a crash or a hand-back streams under a new RunID, so a client that already
  // showed some of that step's text knows to replace it rather than append.
  let callId = run.taskId;
  const chunks = createChunkStream((delta, kind, done) => {
    run.events.emit('llm.completion.chunk', {
      Identity: quad,
      TaskID: run.taskId,
      RunID: callId,
      Delta: delta,
      Done: done,
      Kind: kind,
      OccurredAt: occurredAt(),
    });
  });
  const { signal } = run.signals;
  let result: CompletionResult | undefined;
  try {
    result = await governedCompletion(
      prepared.call,
      {
        taskId: run.taskId,
        step: run.checkpoint.step,
        query: run.task.query,
        goal: run.task.goal,
        ...stepPrompt(run, prepared),
        tools: prepared.specs,
        signal,
        onChunk: (delta, kind) => chunks.push(delta, kind),
        onAttempt: (id) => {
          // What an earlier attempt streamed goes out under its own id before the next attempt's chunks.
          chunks.abandon(false);
          callId = id;
        },
      },
      stepNo,
    );
  } catch (error) {
    chunks.abandon(signal.aborted);
    throw error;
  }
  if (result === undefined) chunks.abandon(signal.aborted);
  else chunks.end();
  return result;
}

function emitDecision(run: RunState, result: CompletionResult): void {
  const quad = run.events.quad;
  const at = occurredAt();
  run.events.emit('llm.cost.recorded', {
    Identity: quad,
    Model: result.model,
    Cost: { currency: 'USD', total: result.costUsd },
    Usage: {
      input_tokens: result.usage.input_tokens,
      output_tokens: result.usage.output_tokens,
      total_tokens: result.usage.input_tokens + result.usage.output_tokens,
    },
    ContextWindowTokens: result.contextWindowTokens,
    OccurredAt: at,
  });
  const { decision } = result;
  run.events.emit('planner.decision', {
    Identity: quad,
    DecisionKind: decision.kind === 'finish' ? DECISION_KINDS.finish : DECISION_KINDS.toolCall,
    Tool: decision.kind === 'tool_call' ? decision.tool : '',
    ReasoningChars: result.reasoning.length,
    ReasoningTrace: result.reasoning.slice(0, MAX_TRACE_CHARS),
    OccurredAt: at,
  });
}

async function toolStep(
  run: RunState,
  prepared: PreparedRun,
  decision: Extract<Decision, { kind: 'tool_call' }>,
  reasoning: string,
  stepNo: number,
  model: string,
): Promise<void> {
  const check = checkToolCall(decision, prepared.exposed);
  run.checkpoint.messages.push(toolCallMessage(decision, reasoning));
  if (!check.ok) {
    const known = prepared.exposed.get(decision.tool);
    run.events.emit('tool.invalid_args', {
      Identity: run.events.quad,
      ToolName: decision.tool,
      Transport: known?.transport ?? 'builtin',
      ValidationError: check.error,
    });
    // A name the run has no tool of is the model's invention, not a tool's call: not counted.
    if (known !== undefined) {
      const outcome = { outcome: 'invalid_args', approvalRequested: false, attempts: 0, durationMs: 0 } as const;
      run.deps.toolCalls.record(run.owner, callRecord(known, { ...outcome, args: decision.args }));
    }
    const feedback = await repairInvalidCall(run, prepared, decision, check.error, model);
    recordResult(run, decision.callId, decision.tool, stepNo, {
      ok: false,
      error: feedback ?? check.error,
      attempts: 0,
    });
    if (feedback !== undefined) await checkpoint(run);
    return;
  }
  run.checkpoint.repairs = resetRepair(run.checkpoint.repairs);
  const { tool, args } = check;
  const gated = tool.approval.mode === 'always';
  if (gated) {
    const verdict = await awaitApproval(run, tool, args);
    if (verdict === 'stop') return;
    if (verdict !== 'approve') {
      const outcome = { outcome: 'rejected', approvalRequested: true, attempts: 0, durationMs: 0, args } as const;
      run.deps.toolCalls.record(run.owner, callRecord(tool, outcome));
      const code = verdict === 'reject' ? RUN_ERROR_CODES.constraintsConflict : RUN_ERROR_CODES.approvalTimeout;
      await finishRun(run, { status: 'failed', error_code: code });
      return;
    }
  }
  for (let authRetry = true; ; authRetry = false) {
    const site = { callId: decision.callId, stepNo, gated, authRetry };
    if ((await callTool(run, prepared, tool, args, site)) !== AUTH_REQUIRED) return;
    // The host refused before the server ran anything: the call waits for the user, then goes once more.
    const outcome = await awaitAuthorization(run, prepared.agent.agentId, sourceOf(tool));
    if (outcome === 'ended' || outcome === 'stop') return;
  }
}

/** What a call returns when the host refused it `auth_required` and the engine may wait for authorization. */
const AUTH_REQUIRED = 'auth_required';

/** `ars.tool.outcome` of a tool span. */
function toolOutcome(outcome: { readonly ok: boolean; readonly exhausted?: boolean }): string {
  if (outcome.ok) return 'completed';
  return outcome.exhausted === true ? 'policy_exhausted' : 'failed';
}

/** The call under the signal its side effect calls for; unsafe: its intent checkpointed first. */
async function callTool(
  run: RunState,
  prepared: PreparedRun,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  site: Omit<CallSite, 'signal'>,
): Promise<typeof AUTH_REQUIRED | undefined> {
  if (tool.sideEffect !== 'unsafe') return invoke(run, prepared, tool, args, { ...site, signal: run.signals.signal });
  let refused: typeof AUTH_REQUIRED | undefined;
  // A drain's hand-back lets an unsafe call finish and checkpoint its outcome (see RunSignals.requestHandback).
  await run.signals.unsafeCall(async (signal) => {
    run.checkpoint.pending_call = {
      call_id: site.callId,
      tool: tool.name,
      transport: tool.transport,
      step: site.stepNo,
      started_at: occurredAt(),
    };
    await checkpoint(run);
    refused = await invoke(run, prepared, tool, args, { ...site, signal });
    if (refused !== undefined) await withdrawPendingCall(run);
  });
  return refused;
}

/**
 * The host refused the unsafe call before it ran: the stored checkpoint
 * goes back to the previous step's (no pending call, no call message), so a
 * run stopped while it waits for authorization replays the step instead of
 * failing `tool_outcome_unknown`.
 */
async function withdrawPendingCall(run: RunState): Promise<void> {
  run.checkpoint.pending_call = null;
  const call = run.checkpoint.messages.pop();
  try {
    await checkpoint(run);
  } finally {
    if (call !== undefined) run.checkpoint.messages.push(call);
  }
}

/**
 * One tool call of step `stepNo`, under `signal`; `gated`: a human approved
 * it first; `authRetry`: an `auth_required` refusal is returned (not
 * recorded) so that the call can wait for authorization and go once more.
 */
interface CallSite {
  readonly callId: string;
  readonly stepNo: number;
  readonly gated: boolean;
  readonly authRetry: boolean;
  readonly signal: AbortSignal;
}

async function invoke(
  run: RunState,
  prepared: PreparedRun,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  { callId, stepNo, gated, authRetry, signal }: CallSite,
): Promise<typeof AUTH_REQUIRED | undefined> {
  const base = { Identity: run.events.quad, ToolName: tool.name, Transport: tool.transport };
  const started = performance.now();
  let failed = 0;
  let offloaded = 0;
  const report = (outcome: CallOutcome['outcome'], attempts: number, output?: string): void =>
    run.deps.toolCalls.record(
      run.owner,
      callRecord(tool, {
        outcome,
        approvalRequested: gated,
        attempts,
        durationMs: performance.now() - started,
        args,
        output,
        artifactsOffloaded: offloaded,
      }),
    );
  run.events.emit('tool.invoked', { ...base, StartedAt: occurredAt() });
  let outcome;
  try {
    const facts = { tool: tool.name, transport: tool.transport, source: sourceOf(tool), callId };
    outcome = await withToolSpan(
      facts,
      () =>
        invokeWithPolicy(
          tool,
          args,
          {
            taskId: run.taskId,
            callId,
            owner: run.owner,
            signal,
            cancelled: () => run.signals.cancel !== undefined,
            countOffloaded: (artifacts) => {
              offloaded += artifacts;
            },
          },
          (attempt, error) => {
            failed = attempt;
            // Not a failure yet: the call waits for the user to authorize its server (tool.auth_required).
            if (authRetry && isAuthRequired(error)) return;
            run.events.emit('tool.failed', {
              ...base,
              Attempts: attempt,
              ErrorClass: error.errorClass,
              ErrorMessage: error.message,
            });
          },
        ),
      toolOutcome,
    );
  } catch (error) {
    if (!run.signals.interrupted) throw error;
    // A cancelled run's call ends here; one handed back or lost is made again by the run's next executor.
    if (run.signals.cancel !== undefined) report('failed', failed + 1);
    return undefined;
  }
  if (!outcome.ok && authRetry && isAuthRequired(outcome.lastError)) return AUTH_REQUIRED;
  if (outcome.ok) {
    run.events.emit('tool.completed', { ...base, Attempts: outcome.attempts, DurationMS: outcome.durationMs });
    // The next prompt carries the caller memory as it is now.
    if (tool.name === SERVICE_TOOL_NAMES.memoryWrite) prepared.memoryStale = true;
    const fed = recordResult(run, callId, tool.name, stepNo, {
      ok: true,
      output: guardPromptContent(run, prepared, 'tool_result', outcome.output),
      attempts: outcome.attempts,
    });
    report('completed', outcome.attempts, fed);
  } else {
    if (outcome.exhausted) {
      run.events.emit('tool.policy_exhausted', {
        ...base,
        Attempts: outcome.attempts,
        LastClass: outcome.errorClass,
        LastError: outcome.error,
      });
    }
    const error = guardPromptContent(run, prepared, 'tool_result', outcome.error);
    recordResult(run, callId, tool.name, stepNo, { ok: false, error, attempts: outcome.attempts });
    report(outcome.exhausted ? 'policy_exhausted' : 'failed', outcome.attempts);
  }
  await checkpoint(run);
  return undefined;
}

function recordResult(
  run: RunState,
  callId: string,
  tool: string,
  stepNo: number,
  result: { ok: true; output: string; attempts: number } | { ok: false; error: string; attempts: number },
): string {
  const message = toolResultMessage(callId, result);
  run.checkpoint.messages.push(message);
  run.checkpoint.completed_calls.push({
    call_id: callId,
    tool,
    step: stepNo,
    ok: result.ok,
    output: message.content,
    attempts: result.attempts,
  });
  run.checkpoint.pending_call = null;
  run.checkpoint.step = stepNo;
  return message.content;
}

/** The one store write of a step, alongside waiting for the step's events. */
async function checkpoint(run: RunState): Promise<void> {
  run.signals.assertLease();
  const [, flushed] = await Promise.allSettled([
    run.deps.runStates.checkpoint(run.taskId, run.owner, run.checkpoint),
    run.events.flush(),
  ]).then((results) => {
    if (results[0].status === 'rejected') throw results[0].reason;
    return results;
  });
  if (flushed.status === 'rejected') run.log.warn({ err: flushed.reason }, 'run events were not all stored');
}

import type { ChatMessage } from '../providers/provider.ts';
import { modelOf } from '../providers/select.ts';
import { compressTrajectory, contextWindowOf, promptBudget, promptTokens } from './context-window.ts';
import { promptMessages, RUN_ERROR_CODES, systemPrompt } from './planner.ts';
import { occurredAt } from './run-events.ts';
import { finishRun } from './run-finish.ts';
import type { PreparedRun } from './run-prepare.ts';
import type { RunState } from './run-state.ts';

/**
 * The context window before each planner call. The prompt's tokens are
 * estimated (`context-window.ts`); over the model's window less its reserve
 * (`LLM_CONTEXT_WINDOW_TOKENS`, `LLM_CONTEXT_RESERVE`), or once when the
 * provider refused the prompt `context_length_exceeded`, the run publishes
 * `llm.context_window_exceeded` and compresses its trajectory:
 * `trajectory.compressed`, or `trajectory.compression_failed` and the run
 * fails `llm_error` (it cannot call its model any more).
 */

/**
 * The system prompt and messages of the run's next call. The query message
 * carries the run's input images as placeholders (`multimodal-inputs.ts`),
 * made into image or file parts for each call; the context-window estimate
 * counts text only.
 */
export function stepPrompt(run: RunState, prepared: PreparedRun): { system: string; messages: ChatMessage[] } {
  const messages = promptMessages(prepared.history, run.task.query, run.checkpoint.messages);
  const parts = prepared.call.media?.placeholders ?? [];
  const query = messages[prepared.history.length];
  if (parts.length > 0 && query !== undefined) messages[prepared.history.length] = { ...query, parts };
  return {
    system: systemPrompt(prepared.agent.system, run.task.goal, [prepared.memoryText, prepared.artifactsText]),
    messages,
  };
}

/**
 * Compresses the trajectory when the next prompt does not fit (`refused`:
 * the provider said so although the estimate did not); false when the run
 * ended because it could not be made to fit.
 */
export async function fitContext(run: RunState, prepared: PreparedRun, refused = false): Promise<boolean> {
  const { settings } = run.deps;
  const model = modelOf(prepared.call.llm.settings, prepared.call.llm.params);
  const window = contextWindowOf(model, settings.contextWindowTokens);
  const { system } = stepPrompt(run, prepared);
  const estimate = (trajectory: readonly ChatMessage[]): number =>
    promptTokens(system, promptMessages(prepared.history, run.task.query, trajectory), prepared.specs, model);
  const tokens = estimate(run.checkpoint.messages);
  const budget = promptBudget(window, settings.contextReserve);
  if (!refused && tokens <= budget) return true;
  const quad = run.events.quad;
  run.events.emit('llm.context_window_exceeded', {
    Identity: quad,
    Model: model,
    EstimatedTokens: tokens,
    ContextWindowTokens: window,
    ContextWindowReserve: settings.contextReserve,
    OccurredAt: occurredAt(),
  });
  // The provider, not the estimate, said it was too long: at least half of the trajectory's tokens go.
  const target = refused ? Math.min(budget, tokens - Math.ceil((tokens - estimate([])) / 2)) : budget;
  const compressed = compressTrajectory(run.checkpoint.messages, (trajectory) => estimate(trajectory) <= target);
  if (compressed === undefined) {
    const message = `the prompt (about ${tokens} tokens) does not fit ${target} tokens of ${model}'s window, even compressed`;
    run.events.emit('trajectory.compression_failed', {
      Identity: quad,
      StepsObserved: run.checkpoint.step,
      TokenEstimate: tokens,
      ErrorCode: RUN_ERROR_CODES.llmError,
      ErrorMessage: message,
      OccurredAt: occurredAt(),
    });
    await finishRun(run, { status: 'failed', error_code: RUN_ERROR_CODES.llmError, reason: message });
    return false;
  }
  run.checkpoint.messages = compressed.messages;
  run.events.emit('trajectory.compressed', {
    Identity: quad,
    StepsBefore: compressed.stepsBefore,
    StepsAfter: compressed.stepsAfter,
    TokenEstimate: estimate(compressed.messages),
    OccurredAt: occurredAt(),
  });
  return true;
}

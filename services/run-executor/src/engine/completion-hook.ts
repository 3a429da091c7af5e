import type { Logger } from '@ars/telemetry';
import { ToolError } from '../tools/tool.ts';
import type { ToolDefinition, ToolOwner } from '../tools/tool.ts';

/**
 * An agent's completion hook (agent_config `completion_hook.tool`): one call
 * of that tool once the run's terminal event is stored, bounded by
 * COMPLETION_HOOK_TIMEOUT_MS, reported by exactly one `run.hook_dispatched`
 * (it returned) or `run.hook_failed` (it threw, refused its arguments, is not
 * in the run's tools, needs a human's approval, or timed out). It never changes the terminal event: it
 * runs after it, and its failure is only reported. It runs at most once per
 * run: only the executor whose `markTerminal` won runs it, and a redelivery of
 * a terminal run re-publishes the terminal event without it.
 */

/** The completion hook a prepared run carries: the tool name, and the tool if the run's registry has it. */
export interface CompletionHook {
  readonly name: string;
  readonly tool: ToolDefinition | undefined;
}

/** What the hook reports on: the run, and how it ended. */
export interface HookRun {
  readonly taskId: string;
  readonly owner: ToolOwner;
  /** The run's terminal status: `complete`, `failed` or `cancelled` (the events' Outcome). */
  readonly outcome: string;
  readonly answer: string | undefined;
  /** The run's trajectory (its checkpointed messages): what the hook gets as `transcript`. */
  readonly transcript: readonly unknown[];
}

/** Where the hook's event goes: published now, under a fixed id. */
export type HookEmit = (type: string, payload: Record<string, unknown>, eventId: string) => Promise<unknown>;

/** The fixed id of a run's hook event: a re-publication is dropped by the stream's duplicate window. */
export function hookEventId(taskId: string): string {
  return `${taskId}:completion_hook`;
}

class HookTimeout extends Error {
  constructor() {
    super('completion hook timed out');
    this.name = 'HookTimeout';
  }
}

/** The ErrorClass of a thrown hook: a tool's class, `timeout` or `internal` (see also `invalid_args`, `unknown_tool`, `approval_required`). */
function errorClassOf(error: unknown): string {
  if (error instanceof HookTimeout) return 'timeout';
  if (error instanceof ToolError) return error.errorClass;
  return 'internal';
}

/** Runs `tool` with `args`, abandoning it (and aborting its signal) after `timeoutMs`. */
async function callBounded(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  run: HookRun,
  timeoutMs: number,
): Promise<void> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Rejected first: a tool that settles on the abort must not win the race.
      reject(new HookTimeout());
      abort.abort();
    }, timeoutMs);
  });
  const context = {
    taskId: run.taskId,
    owner: run.owner,
    callId: hookEventId(run.taskId),
    attempt: 1,
    signal: abort.signal,
  };
  try {
    await Promise.race([tool.run(args, context), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the hook and publishes its one event; never throws (a failed publish is logged). */
export async function runCompletionHook(
  hook: CompletionHook,
  run: HookRun,
  deps: { readonly emit: HookEmit; readonly timeoutMs: number; readonly log: Logger },
): Promise<void> {
  const transcript = JSON.stringify(run.transcript);
  const failed = (errorClass: string) =>
    deps.emit(
      'run.hook_failed',
      { Tool: hook.name, Outcome: run.outcome, ErrorClass: errorClass },
      hookEventId(run.taskId),
    );
  try {
    if (hook.tool === undefined) {
      await failed('unknown_tool');
      return;
    }
    if (hook.tool.approval.mode === 'always') {
      // Nobody is left to approve it: the run has ended.
      await failed('approval_required');
      return;
    }
    const args = { task_id: run.taskId, outcome: run.outcome, answer: run.answer ?? '', transcript: run.transcript };
    const parsed = hook.tool.args.safeParse(args);
    if (!parsed.success) {
      await failed('invalid_args');
      return;
    }
    const started = performance.now();
    try {
      await callBounded(hook.tool, parsed.data, run, deps.timeoutMs);
    } catch (error) {
      deps.log.warn({ err: error, tool: hook.name }, 'completion hook failed');
      await failed(errorClassOf(error));
      return;
    }
    await deps.emit(
      'run.hook_dispatched',
      {
        Tool: hook.name,
        Outcome: run.outcome,
        DurationMS: Math.round(performance.now() - started),
        TranscriptBytes: Buffer.byteLength(transcript),
        EntryCount: run.transcript.length,
      },
      hookEventId(run.taskId),
    );
  } catch (error) {
    deps.log.warn({ err: error, tool: hook.name }, 'completion hook event not published');
  }
}

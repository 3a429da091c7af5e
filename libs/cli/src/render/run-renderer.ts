import type { EventFrame } from '@ars/client';
import { clip, createStyle, ERASE_LINE, formatCost, formatDuration } from './style.ts';

/**
 * `ars run --follow`: turns a run's event frames into what a person reads.
 * The LLM's text streams as it comes (`llm.completion.chunk` of kind text);
 * tool calls are one line each with a short argument summary and then their
 * result; an approval pause prints its token and the commands that answer
 * it; the end is one line with status, duration, steps, tokens and cost. On a
 * terminal (`live`) a progress line (step, elapsed time, tokens) stays at the
 * bottom and is redrawn by `tick()`. Pure: it returns the text to write.
 */

type Payload = Readonly<Record<string, unknown>>;

/** Options of {@link createRunRenderer}. */
export interface RunRendererOptions {
  /** ANSI colors. */
  readonly color: boolean;
  /** Output is a terminal: keep a progress line at the bottom. */
  readonly live: boolean;
  /** Appended to the commands the hints print (e.g. `--session s1`). @default '' */
  readonly hintArgs?: string;
  /** The clock of the progress line, in ms. @default Date.now */
  readonly now?: () => number;
}

/** How the run went, as far as its events told. */
export interface RunSummary {
  readonly taskId: string | undefined;
  /** From the terminal event; undefined while the run is live. */
  readonly status: 'completed' | 'failed' | 'cancelled' | undefined;
  /** `ErrorCode` of task.failed, `Reason` of task.cancelled. */
  readonly reason: string | undefined;
  /** Planner steps decided. */
  readonly steps: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cost: number;
  readonly currency: string;
  /** From the first event's `occurred_at` to the terminal one's, in ms; undefined while live. */
  readonly durationMs: number | undefined;
}

/** What the renderer offers a command. */
export interface RunRenderer {
  /** The text for one frame (the progress line erased and drawn again around it). */
  frame(frame: EventFrame): string;
  /** The progress line redrawn (live only; '' otherwise or while text streams). */
  tick(): string;
  /** The closing line after the terminal event, with an optional detail (an error message). */
  end(detail?: string): string;
  /** Ends the output when following stops early: the progress line erased, the text line ended. */
  interrupt(): string;
  /** The state so far. */
  summary(): RunSummary;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The argument summary of a tool call from its streamed `tool_call` text (`echo {"text":"hi"}` or bare JSON). */
export function argumentSummary(tool: string, streamed: string): string {
  const text = streamed.startsWith(`${tool} `) ? streamed.slice(tool.length + 1) : streamed;
  return clip(text, 80);
}

/** Creates a renderer for one run. */
export function createRunRenderer(options: RunRendererOptions): RunRenderer {
  const style = createStyle(options.color);
  const now = options.now ?? Date.now;
  const hint = options.hintArgs ? ` ${options.hintArgs}` : '';
  const approvals = new Set<string>();
  let taskId: string | undefined;
  let status: RunSummary['status'];
  let reason: string | undefined;
  let steps = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let cost = 0;
  let currency = 'USD';
  let firstAt: number | undefined;
  let lastAt: number | undefined;
  let startedLocal: number | undefined;
  let toolArgs = '';
  let runningTool: string | undefined;
  /** The cursor is after streamed text that did not end its line. */
  let midLine = false;
  let progressShown = false;

  /** A whole line, after ending any streamed text. */
  const line = (text: string): string => {
    const prefix = midLine ? '\n' : '';
    midLine = false;
    return `${prefix}${text}\n`;
  };

  const progress = (): string => {
    if (!options.live || midLine || status !== undefined || startedLocal === undefined) return '';
    progressShown = true;
    const parts = [
      `step ${runningTool === undefined ? steps + 1 : steps}`,
      formatDuration(now() - startedLocal),
      `${inputTokens + outputTokens} tokens`,
      ...(runningTool === undefined ? [] : [`running ${runningTool}`]),
    ];
    return style.dim(`… ${parts.join(' · ')}`);
  };

  const erase = (): string => {
    if (!progressShown) return '';
    progressShown = false;
    return ERASE_LINE;
  };

  function body(frame: EventFrame): string {
    const p = (frame.payload ?? {}) as Payload;
    switch (frame.type) {
      case 'task.spawned':
        return line(style.dim(`run ${frame.run}`));
      case 'llm.completion.chunk':
        return chunk(p);
      case 'llm.cost.recorded': {
        const usage = (p['Usage'] ?? {}) as Payload;
        const recorded = (p['Cost'] ?? {}) as Payload;
        inputTokens += num(usage['input_tokens']);
        outputTokens += num(usage['output_tokens']);
        cost += num(recorded['total']);
        if (str(recorded['currency']) !== '') currency = str(recorded['currency']);
        return '';
      }
      case 'planner.decision':
        steps++;
        return '';
      default:
        return toolOrPause(frame.type, p);
    }
  }

  function chunk(p: Payload): string {
    const delta = str(p['Delta']);
    if (p['Kind'] === 'tool_call') {
      toolArgs += delta;
      return '';
    }
    if (p['Kind'] !== 'text' || delta === '') return '';
    midLine = !delta.endsWith('\n');
    return delta;
  }

  function toolOrPause(type: string, p: Payload): string {
    const tool = str(p['ToolName']) || str(p['Tool']);
    switch (type) {
      case 'tool.invoked': {
        const args = argumentSummary(tool, toolArgs);
        toolArgs = '';
        runningTool = tool;
        return line(`${style.cyan('→')} ${style.bold(tool)}${args === '' ? '' : ` ${style.dim(args)}`}`);
      }
      case 'tool.completed': {
        runningTool = undefined;
        const attempts = num(p['Attempts']) > 1 ? `, ${num(p['Attempts'])} attempts` : '';
        return line(`${style.green('✓')} ${tool} ${style.dim(`(${formatDuration(num(p['DurationMS']))}${attempts})`)}`);
      }
      case 'tool.failed':
        return line(
          style.yellow(`! ${tool} attempt ${num(p['Attempts'])} failed: ${clip(str(p['ErrorMessage']), 100)}`),
        );
      case 'tool.policy_exhausted':
        runningTool = undefined;
        return line(
          style.red(`✗ ${tool} gave up after ${num(p['Attempts'])} attempts: ${clip(str(p['LastError']), 100)}`),
        );
      case 'tool.invalid_args':
        toolArgs = '';
        return line(style.red(`✗ ${tool}: invalid call: ${clip(str(p['ValidationError']), 100)}`));
      case 'tool.approval_requested':
        return approvalRequested(tool, p);
      case 'tool.approved':
        return line(
          `${style.green('✓')} approved ${tool}${p['ApproverReason'] ? `: ${str(p['ApproverReason'])}` : ''}`,
        );
      case 'tool.rejected':
        return line(style.red(`✗ rejected ${tool}${p['Reason'] ? `: ${str(p['Reason'])}` : ''}`));
      case 'tool.auth_required':
        return line(
          style.yellow(`⏸ sign-in needed for ${str(p['SourceName']) || str(p['Source'])}: ${str(p['AuthorizeURL'])}`),
        );
      case 'pause.requested':
        if (approvals.has(str(p['Token']))) return '';
        return (
          line(style.yellow(`⏸ paused: ${str(p['Reason'])}`)) +
          (taskId === undefined ? '' : line(`  resume: ars resume ${taskId}${hint}`))
        );
      case 'pause.resumed':
        return line(style.dim(`▶ resumed (${str(p['Decision']) || 'resume'})`));
      case 'planner.max_steps_exceeded':
        return line(style.red(`✗ stopped after ${num(p['StepsObserved'])} steps (max ${num(p['MaxSteps'])})`));
      case 'governance.budget_exceeded':
        return line(
          style.red(
            `✗ budget exceeded: ${formatCost(num(p['TotalCost']), str(p['Currency']))} of ${formatCost(num(p['Ceiling']), str(p['Currency']))}`,
          ),
        );
      case 'llm.retry_with_feedback':
        return line(style.dim(`↻ asking the model again: ${clip(str(p['Reason']), 100)}`));
      default:
        return '';
    }
  }

  function approvalRequested(tool: string, p: Payload): string {
    const token = str(p['PauseToken']);
    approvals.add(token);
    const args = p['ArgsSummary'] === undefined ? '' : ` ${clip(JSON.stringify(p['ArgsSummary']), 80)}`;
    return (
      line(style.yellow(`⏸ ${tool}${args} awaits approval: ${str(p['Reason'])}`)) +
      line(`  approve: ars approve ${token}${hint}`) +
      line(`  reject:  ars reject ${token}${hint}`)
    );
  }

  function terminal(frame: EventFrame): void {
    const p = (frame.payload ?? {}) as Payload;
    status = frame.type.slice('task.'.length) as RunSummary['status'];
    reason = str(p['ErrorCode']) || str(p['Reason']) || undefined;
    runningTool = undefined;
  }

  const summary = (): RunSummary => ({
    taskId,
    status,
    reason,
    steps,
    inputTokens,
    outputTokens,
    cost,
    currency,
    durationMs: status === undefined || firstAt === undefined || lastAt === undefined ? undefined : lastAt - firstAt,
  });

  return {
    frame(frame) {
      taskId ??= frame.run || undefined;
      startedLocal ??= now();
      const at = Date.parse(frame.occurred_at);
      if (Number.isFinite(at)) {
        firstAt ??= at;
        lastAt = at;
      }
      if (frame.type === 'task.completed' || frame.type === 'task.failed' || frame.type === 'task.cancelled') {
        terminal(frame);
      }
      const text = body(frame);
      return erase() + text + progress();
    },
    tick() {
      if (!options.live || midLine) return '';
      const next = progress();
      return next === '' ? '' : ERASE_LINE + next;
    },
    end(detail) {
      const s = summary();
      const parts = [
        ...(s.durationMs === undefined ? [] : [formatDuration(s.durationMs)]),
        `${s.steps} step${s.steps === 1 ? '' : 's'}`,
        `${s.inputTokens + s.outputTokens} tokens (${s.inputTokens} in, ${s.outputTokens} out)`,
        formatCost(s.cost, s.currency),
      ].join(' · ');
      const head =
        s.status === 'completed'
          ? style.green('✔ completed')
          : s.status === 'failed'
            ? style.red(`✖ failed${s.reason ? ` (${s.reason})` : ''}`)
            : style.yellow(`■ cancelled${s.reason ? ` (${s.reason})` : ''}`);
      return erase() + line(`${head} · ${parts}`) + (detail ? line(style.red(`  ${detail}`)) : '');
    },
    interrupt() {
      const text = erase() + (midLine ? '\n' : '');
      midLine = false;
      return text;
    },
    summary,
  };
}

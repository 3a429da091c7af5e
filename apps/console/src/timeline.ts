import type { EventFrame } from '@ars/client';

/** What became of a tool call, from its `tool.*` events. */
export interface ToolOutcome {
  readonly state: 'running' | 'completed' | 'failed' | 'exhausted' | 'invalid_args';
  readonly attempts?: number;
  readonly durationMs?: number;
  /** The error of a failed attempt, the exhausted policy or the refused arguments. */
  readonly error?: string;
}

/**
 * One entry of a run's timeline. Consecutive LLM chunks of one kind are
 * merged (`text`: the answer as it streams; `reasoning`: the model's
 * thinking). A tool call is one entry: its arguments as the model streamed
 * them (`tool_call` chunks), then what its `tool.*` events said of it (the
 * result itself is not on the stream: tool events carry no content).
 */
export type TimelineEntry =
  | {
      readonly kind: 'llm';
      readonly key: string;
      readonly stream: 'text' | 'reasoning';
      readonly text: string;
      readonly done: boolean;
    }
  | {
      readonly kind: 'tool';
      readonly key: string;
      readonly tool: string;
      readonly transport: string;
      /** The arguments as streamed: JSON text, or empty when the model streamed none. */
      readonly args: string;
      readonly outcome: ToolOutcome;
      /** The call's `tool.*` frames, in order (their payloads are one click away). */
      readonly frames: readonly EventFrame[];
    }
  | { readonly kind: 'event'; readonly key: string; readonly frame: EventFrame };

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** The arguments of a `tool_call` stream: `echo {"a":1}` (a text-mode model names the tool first) or bare JSON. */
export function streamedArguments(tool: string, streamed: string): string {
  const trimmed = streamed.trim();
  return trimmed.startsWith(`${tool} `) ? trimmed.slice(tool.length + 1).trim() : trimmed;
}

/** The outcome a tool event gives its call; undefined for an event that is not about its end. */
function outcomeOf(frame: EventFrame): ToolOutcome | undefined {
  const p = frame.payload;
  switch (frame.type) {
    case 'tool.completed': {
      const attempts = count(p.Attempts);
      const durationMs = count(p.DurationMS);
      return {
        state: 'completed',
        ...(attempts === undefined ? {} : { attempts }),
        ...(durationMs === undefined ? {} : { durationMs }),
      };
    }
    case 'tool.failed': {
      // One attempt failed; the policy may try again (tool.policy_exhausted ends it).
      const attempts = count(p.Attempts);
      return {
        state: 'failed',
        ...(attempts === undefined ? {} : { attempts }),
        error: `${text(p.ErrorClass)} ${text(p.ErrorMessage)}`.trim(),
      };
    }
    case 'tool.policy_exhausted': {
      const attempts = count(p.Attempts);
      return {
        state: 'exhausted',
        ...(attempts === undefined ? {} : { attempts }),
        error: `${text(p.LastClass)} ${text(p.LastError)}`.trim(),
      };
    }
    case 'tool.invalid_args':
      return { state: 'invalid_args', error: text(p.ValidationError) };
    default:
      return undefined;
  }
}

/** Folds a run's frames into timeline entries (in sequence order, each frame once). */
export function buildTimeline(frames: readonly EventFrame[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  let pendingArgs = '';
  /** Index of the latest tool entry by tool name, while its call may still get events. */
  const openTools = new Map<string, number>();
  for (const frame of frames) {
    if (frame.type === 'llm.completion.chunk') {
      const delta = text(frame.payload.Delta);
      const kind = frame.payload.Kind;
      if (kind === 'tool_call') {
        pendingArgs += delta;
        continue;
      }
      const stream = kind === 'reasoning' ? 'reasoning' : 'text';
      const done = frame.payload.Done === true;
      const last = entries.at(-1);
      if (last?.kind === 'llm' && last.stream === stream && !last.done) {
        entries[entries.length - 1] = { ...last, text: last.text + delta, done };
      } else if (delta !== '' || !done) {
        entries.push({ kind: 'llm', key: `llm-${frame.sequence}`, stream, text: delta, done });
      }
      continue;
    }
    const tool = text(frame.payload.ToolName);
    if (frame.type === 'tool.invoked') {
      openTools.set(tool, entries.length);
      entries.push({
        kind: 'tool',
        key: `tool-${frame.sequence}`,
        tool,
        transport: text(frame.payload.Transport),
        args: streamedArguments(tool, pendingArgs),
        outcome: { state: 'running' },
        frames: [frame],
      });
      pendingArgs = '';
      continue;
    }
    const outcome = outcomeOf(frame);
    const open = openTools.get(tool);
    const entry = open === undefined ? undefined : entries[open];
    if (outcome !== undefined && entry?.kind === 'tool') {
      entries[open as number] = { ...entry, outcome, frames: [...entry.frames, frame] };
      continue;
    }
    if (frame.type === 'tool.invalid_args' && outcome !== undefined) {
      // Refused before it ran: the call never had a tool.invoked.
      entries.push({
        kind: 'tool',
        key: `tool-${frame.sequence}`,
        tool,
        transport: text(frame.payload.Transport),
        args: streamedArguments(tool, pendingArgs),
        outcome,
        frames: [frame],
      });
      pendingArgs = '';
      continue;
    }
    entries.push({ kind: 'event', key: String(frame.sequence), frame });
  }
  return entries;
}

/** The total of `llm.cost.recorded` costs, by currency. */
export function costTotals(frames: readonly EventFrame[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const frame of frames) {
    if (frame.type !== 'llm.cost.recorded') continue;
    const cost = frame.payload.Cost as { currency?: unknown; total?: unknown } | undefined;
    if (typeof cost?.total !== 'number') continue;
    const currency = typeof cost.currency === 'string' ? cost.currency : 'USD';
    totals[currency] = (totals[currency] ?? 0) + cost.total;
  }
  return totals;
}

/** A steering request the console sent, and what the stream said of it. */
export interface SteeringEffect {
  readonly id: number;
  readonly method: string;
  readonly state: 'sent' | 'applied' | 'rejected';
  readonly detail?: string;
}

/**
 * Marks the oldest `sent` effect of the frame's control `Type` as applied or
 * rejected when its `control.applied` / `control.rejected` arrives.
 */
export function settleEffect(effects: readonly SteeringEffect[], frame: EventFrame): readonly SteeringEffect[] {
  if (frame.type !== 'control.applied' && frame.type !== 'control.rejected') return effects;
  const type = frame.payload.Type;
  const index = effects.findIndex((e) => e.state === 'sent' && e.method === type);
  if (index === -1) return effects;
  const applied = frame.type === 'control.applied';
  const detail = applied
    ? String(frame.payload.Outcome ?? '')
    : String(frame.payload.Reason ?? frame.payload.Err ?? '');
  const next = [...effects];
  next[index] = { ...(effects[index] as SteeringEffect), state: applied ? 'applied' : 'rejected', detail };
  return next;
}

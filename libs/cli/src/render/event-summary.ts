import type { EventFrame } from '@ars/client';
import { clip, createStyle, formatCost } from './style.ts';
import type { Style } from './style.ts';

/**
 * `ars events --pretty`: one readable line per event frame,
 * `08:14:57.414  #17 task.completed  01a21c12-…  notify=false`: the time,
 * the sequence, the type, the run id and a short summary of the payload.
 */

type Payload = Readonly<Record<string, unknown>>;

const str = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
/** `key=value`, the value quoted when it has spaces; empty values are left out. */
const pairs = (entries: Readonly<Record<string, unknown>>): string =>
  Object.entries(entries)
    .filter(([, value]) => value !== undefined && value !== '' && value !== null)
    .map(([key, value]) => {
      const text = clip(str(value), 80);
      return `${key}=${/\s/.test(text) ? JSON.stringify(text) : text}`;
    })
    .join(' ');

/** Summaries of the event types a user watches most; every other type gets its scalar members. */
const SUMMARIES: Readonly<Record<string, (p: Payload) => string>> = {
  'task.spawned': (p) => pairs({ kind: p['Kind'], priority: p['Priority'], parent: p['ParentTaskID'] }),
  'task.started': (p) => pairs({ prior: p['PriorState'] }),
  'task.completed': () => '',
  'task.failed': (p) => pairs({ error: p['ErrorCode'] }),
  'task.cancelled': (p) => pairs({ reason: p['Reason'], cascaded: p['Cascaded'] === true ? true : undefined }),
  'llm.completion.chunk': (p) => `${str(p['Kind'])} ${JSON.stringify(clip(str(p['Delta']), 60))}`,
  'llm.cost.recorded': (p) => {
    const usage = (p['Usage'] ?? {}) as Payload;
    const cost = (p['Cost'] ?? {}) as Payload;
    return pairs({
      model: p['Model'],
      tokens: `${num(usage['input_tokens'])}+${num(usage['output_tokens'])}`,
      cost: formatCost(num(cost['total']), str(cost['currency'] ?? 'USD')),
    });
  },
  'planner.decision': (p) => pairs({ decision: p['DecisionKind'], tool: p['Tool'] }),
  'tool.invoked': (p) => pairs({ tool: p['ToolName'], transport: p['Transport'] }),
  'tool.completed': (p) => pairs({ tool: p['ToolName'], attempts: p['Attempts'], ms: p['DurationMS'] }),
  'tool.failed': (p) => pairs({ tool: p['ToolName'], attempt: p['Attempts'], error: p['ErrorMessage'] }),
  'tool.approval_requested': (p) => pairs({ tool: p['Tool'], token: p['PauseToken'], reason: p['Reason'] }),
  'tool.approved': (p) => pairs({ tool: p['Tool'], token: p['PauseToken'], reason: p['ApproverReason'] }),
  'tool.rejected': (p) => pairs({ tool: p['Tool'], token: p['PauseToken'], reason: p['Reason'] }),
  'pause.requested': (p) => pairs({ token: p['Token'], reason: p['Reason'] }),
  'pause.resumed': (p) => pairs({ token: p['Token'], decision: p['Decision'], reason: p['Reason'] }),
};

/** Members every payload of a family repeats; not worth a place on one line. */
const NOISE = new Set(['Identity', 'OccurredAt', 'TaskID', 'Actor', 'Author']);

function genericSummary(payload: Payload): string {
  const scalars: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (NOISE.has(key) || (typeof value === 'object' && value !== null)) continue;
    scalars[key] = value;
    if (Object.keys(scalars).length === 4) break;
  }
  return pairs(scalars);
}

/** The summary of a frame's payload (no type, time or run). */
export function summarizeEvent(frame: Pick<EventFrame, 'type' | 'payload'>): string {
  const payload = (frame.payload ?? {}) as Payload;
  const summarize = SUMMARIES[frame.type];
  return summarize ? summarize(payload) : genericSummary(payload);
}

/** Options of {@link formatEventLine}. */
export interface EventLineOptions {
  /** Colors (the type by its family, errors red). */
  readonly color: boolean;
  /** Print the time in UTC instead of the local time zone. @default false */
  readonly utc?: boolean;
}

function clockOf(iso: string, utc: boolean): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = utc
    ? [date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()]
    : [date.getHours(), date.getMinutes(), date.getSeconds()];
  const ms = utc ? date.getUTCMilliseconds() : date.getMilliseconds();
  return `${parts.map((n) => String(n).padStart(2, '0')).join(':')}.${String(ms).padStart(3, '0')}`;
}

function typeStyle(type: string, style: Style): (text: string) => string {
  if (type === 'task.failed' || type.endsWith('.failed') || type.endsWith('.rejected')) return style.red;
  if (type === 'task.completed') return style.green;
  if (type.startsWith('task.') || type.startsWith('pause.')) return style.yellow;
  if (type.startsWith('tool.')) return style.cyan;
  if (type.startsWith('llm.') || type.startsWith('planner.')) return style.magenta;
  return (text) => text;
}

/** One line (no newline) of a frame: time, sequence, type, run, summary. */
export function formatEventLine(frame: EventFrame, options: EventLineOptions): string {
  const style = createStyle(options.color);
  const summary = summarizeEvent(frame);
  return [
    style.dim(clockOf(frame.occurred_at, options.utc === true)),
    style.dim(`#${frame.sequence}`),
    typeStyle(frame.type, style)(frame.type.padEnd(24)),
    frame.run === '' ? style.dim('-') : frame.run,
    ...(summary === '' ? [] : [summary]),
  ].join('  ');
}

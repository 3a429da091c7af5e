import type { ChatMessage } from '../providers/provider.ts';
import type { ToolSpec } from '../tools/registry.ts';
import { encodingOf, messageTokens, textTokens } from './token-estimate.ts';

/**
 * The context window of a step's prompt, pure: the model's window, the
 * prompt's estimated tokens, and the deterministic compression of a run's
 * trajectory when it does not fit.
 *
 * The estimate counts the system prompt, every message's text and tool-call
 * arguments, and the tools' JSON: with the model's tokenizer for OpenAI
 * families (`token-estimate.ts`, cached per message), else at 4 characters a
 * token; it over-counts English prose a little and under-counts CJK text.
 */

/** Windows of well-known models by name prefix (longest prefix first), in tokens. */
const MODEL_WINDOWS: readonly (readonly [string, number])[] = [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['gpt-5', 400_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
];
/** The window of a model the table does not know. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The window of `model`: the override when above 0, else the table's, else {@link DEFAULT_CONTEXT_WINDOW}. */
export function contextWindowOf(model: string, override: number): number {
  if (override > 0) return override;
  const entry = MODEL_WINDOWS.find(([prefix]) => model.startsWith(prefix));
  return entry?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

/** The tokens a prompt may take: the window less its reserve (a fraction kept for the answer). */
export function promptBudget(window: number, reserve: number): number {
  return Math.floor(window * (1 - reserve));
}

/**
 * The tools' JSON, made once per list: a run's list is fixed once prepared,
 * and the estimate runs at every step (and at each compression attempt);
 * stringifying every schema each time was most of the estimate's cost.
 */
const toolsJson = new WeakMap<readonly ToolSpec[], string>();

function toolsText(tools: readonly ToolSpec[]): string {
  let text = toolsJson.get(tools);
  if (text === undefined) {
    text = JSON.stringify(tools);
    toolsJson.set(tools, text);
  }
  return text;
}

/** The estimated tokens of a prompt for `model` (not an OpenAI family's, or absent: 4 characters a token). */
export function promptTokens(
  system: string,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
  model?: string,
): number {
  const encoding = model === undefined ? undefined : encodingOf(model);
  if (encoding !== undefined) {
    let tokens = textTokens(system, encoding) + (tools.length === 0 ? 0 : textTokens(toolsText(tools), encoding));
    for (const m of messages) tokens += messageTokens(m, encoding);
    return tokens;
  }
  let chars = system.length + (tools.length === 0 ? 0 : toolsText(tools).length);
  for (const m of messages) {
    chars += m.content.length + 4;
    if (m.tool_call !== undefined) chars += m.tool_call.name.length + JSON.stringify(m.tool_call.args).length;
  }
  return Math.ceil(chars / 4);
}

/** The first line of the system message that holds the compressed steps. */
export const COMPRESSED_HEADER = 'Earlier steps of this run, compressed:';
/** Characters of a compressed step's result kept in its summary line. */
const SUMMARY_RESULT_CHARS = 160;
/** A result is cited when a later message repeats this many of its first characters (or names its call id). */
const CITE_CHARS = 24;

/** The result of a compression: the new trajectory and its tool-call steps before and after. */
export interface Compression {
  readonly messages: ChatMessage[];
  readonly stepsBefore: number;
  readonly stepsAfter: number;
}

const stepsOf = (messages: readonly ChatMessage[]): number => messages.filter((m) => m.tool_call !== undefined).length;

/** True when a message after `from` names the call or repeats the start of its result. */
function cited(messages: readonly ChatMessage[], from: number, callId: string, result: string): boolean {
  const head = result.length >= CITE_CHARS ? result.slice(0, CITE_CHARS) : undefined;
  for (const m of messages.slice(from)) {
    const text =
      m.role === 'tool' ? '' : `${m.content}${m.tool_call === undefined ? '' : JSON.stringify(m.tool_call.args)}`;
    if (text.includes(callId) || (head !== undefined && text.includes(head))) return true;
  }
  return false;
}

function summaryLine(call: NonNullable<ChatMessage['tool_call']>, result: string): string {
  const cut = result.length > SUMMARY_RESULT_CHARS ? `${result.slice(0, SUMMARY_RESULT_CHARS)}…` : result;
  return `- ${call.name} ${JSON.stringify(call.args).slice(0, SUMMARY_RESULT_CHARS)} → ${cut}`;
}

/**
 * Compresses `messages` until `fits` says so: oldest first, each tool call
 * and its result become one summary line in a system message (merged with
 * an earlier compression's) at the place of the first one; the last step, and
 * results a later message cites (its call id, or its first 24 characters),
 * stay whole. `undefined` when nothing is left to compress and it still does not fit.
 */
export function compressTrajectory(
  messages: readonly ChatMessage[],
  fits: (messages: readonly ChatMessage[]) => boolean,
): Compression | undefined {
  const stepsBefore = stepsOf(messages);
  const lines: string[] = [];
  let rest = messages.filter((m) => {
    if (m.role !== 'system' || !m.content.startsWith(COMPRESSED_HEADER)) return true;
    lines.push(...m.content.split('\n').slice(1));
    return false;
  });
  let anchor = messages.findIndex((m) => m.role === 'system' && m.content.startsWith(COMPRESSED_HEADER));
  const build = (): ChatMessage[] => {
    if (lines.length === 0) return rest;
    const at = anchor < 0 ? rest.length : Math.min(anchor, rest.length);
    const summary: ChatMessage = { role: 'system', content: [COMPRESSED_HEADER, ...lines].join('\n') };
    return [...rest.slice(0, at), summary, ...rest.slice(at)];
  };
  for (let i = 0; i < rest.length;) {
    const call = rest[i]?.tool_call;
    const result = rest[i + 1];
    const isLastStep = rest.slice(i + 1).every((m) => m.tool_call === undefined);
    if (call === undefined || result?.role !== 'tool' || isLastStep || cited(rest, i + 2, call.id, result.content)) {
      i++;
      continue;
    }
    lines.push(summaryLine(call, result.content));
    if (anchor < 0 || anchor > i) anchor = i;
    rest = [...rest.slice(0, i), ...rest.slice(i + 2)];
    const candidate = build();
    if (fits(candidate)) return { messages: candidate, stepsBefore, stepsAfter: stepsOf(candidate) };
  }
  return undefined;
}

/**
 * Scripts of the `scripted` provider: which decision it makes at each planner
 * step. A script comes from the agent configuration (`llm_provider.script`,
 * a list of records) or from the query itself with a directive:
 *
 * ```
 * #script tool:echo{"text":"hi"};stream:20/5;tool:wait{ms:50};finish:done
 * ```
 *
 * Steps are separated by `;`:
 * - `tool:<name>` or `tool:<name>{<args>}`: call a tool; args are JSON, and
 *   bare keys are accepted (`{ms:50}`).
 * - `finish` or `finish:<answer>`: end the run with that answer.
 * - `stream:<count>/<ms>`: the next step first streams `count` chunks,
 *   `ms` milliseconds apart (long streams for cancellation tests).
 * - `loop`: after the last step, start again from the first (max-steps tests).
 * - `inspect`: finish, with a reasoning text that is the JSON of what the
 *   provider received: `{system, params, tools, messages}` (tests read it on
 *   `planner.decision` ReasoningTrace to see each configuration layer).
 * - `cost:<usd>`: every later step reports this cost in USD (budget tests).
 * After the last step (without `loop`) the provider finishes.
 *
 * Config records: `{tool, args?}`, `{finish?: answer}`, `{inspect: true}`,
 * `{stream: {count, delay_ms}}`, `{loop: true}`; a tool, finish or inspect
 * record may also carry `chunks`, `delay_ms` and `cost_usd`.
 */

/** The directive prefix of a scripted query. */
export const SCRIPT_DIRECTIVE = '#script';

export type ScriptAction =
  | { readonly kind: 'tool'; readonly tool: string; readonly args: Record<string, unknown> }
  | { readonly kind: 'finish'; readonly answer: string | undefined }
  | { readonly kind: 'inspect' };

export interface ScriptStep {
  readonly action: ScriptAction;
  /** Extra filler chunks streamed before the decision. @default 0 */
  readonly chunks: number;
  /** Pause before each filler chunk, in ms. @default 0 */
  readonly delayMs: number;
  /** Cost the step reports, in USD. @default 0 */
  readonly costUsd: number;
}

export interface Script {
  readonly steps: readonly ScriptStep[];
  readonly loop: boolean;
}

/** A malformed script: the run fails rather than guess. */
export class ScriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScriptError';
  }
}

/** Splits on `;` outside braces and quotes. */
function splitSteps(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '\\') {
        current += ch + (text[i + 1] ?? '');
        i++;
        continue;
      }
      if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    else if (ch === ';' && depth === 0) {
      parts.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current.trim());
  return parts.filter((p) => p !== '');
}

/** JSON with bare object keys allowed. */
function parseArgs(text: string): Record<string, unknown> {
  const relaxed = text.replace(/([{,]\s*)([A-Za-z_][\w-]*)\s*:/g, '$1"$2":');
  let value: unknown;
  try {
    value = JSON.parse(relaxed);
  } catch {
    throw new ScriptError(`script arguments are not JSON: ${text.slice(0, 200)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScriptError(`script arguments must be an object: ${text.slice(0, 200)}`);
  }
  return value as Record<string, unknown>;
}

function parseCost(spec: string): number {
  const cost = Number(spec);
  if (spec === '' || !Number.isFinite(cost) || cost < 0)
    throw new ScriptError(`cost takes a non-negative number: ${spec}`);
  return cost;
}

function parseStream(spec: string): { chunks: number; delayMs: number } {
  const match = /^(\d+)(?:\/(\d+))?$/.exec(spec);
  if (match === null) throw new ScriptError(`stream takes <count>/<ms>: ${spec}`);
  return { chunks: Math.min(Number(match[1]), 100_000), delayMs: Math.min(Number(match[2] ?? 0), 60_000) };
}

function parseToolStep(rest: string): ScriptAction {
  const brace = rest.indexOf('{');
  const tool = (brace === -1 ? rest : rest.slice(0, brace)).trim();
  if (!/^[A-Za-z0-9_.-]+$/.test(tool)) throw new ScriptError(`not a tool name: ${tool}`);
  return { kind: 'tool', tool, args: brace === -1 ? {} : parseArgs(rest.slice(brace)) };
}

/** Parses a `#script …` query; `undefined` when the query is not a directive. */
export function parseDirective(query: string): Script | undefined {
  const trimmed = query.trimStart();
  if (!trimmed.startsWith(SCRIPT_DIRECTIVE)) return undefined;
  const steps: ScriptStep[] = [];
  let loop = false;
  let pending = { chunks: 0, delayMs: 0 };
  let costUsd = 0;
  for (const part of splitSteps(trimmed.slice(SCRIPT_DIRECTIVE.length))) {
    const colon = part.indexOf(':');
    const head = (colon === -1 ? part : part.slice(0, colon)).trim();
    const rest = colon === -1 ? '' : part.slice(colon + 1);
    if (head === 'loop') loop = true;
    else if (head === 'stream') pending = parseStream(rest.trim());
    else if (head === 'cost') costUsd = parseCost(rest.trim());
    else if (head === 'tool' || head === 'finish' || head === 'inspect') {
      const action: ScriptAction =
        head === 'tool'
          ? parseToolStep(rest)
          : head === 'inspect'
            ? { kind: 'inspect' }
            : { kind: 'finish', answer: colon === -1 ? undefined : rest };
      steps.push({ action, ...pending, costUsd });
      pending = { chunks: 0, delayMs: 0 };
    } else throw new ScriptError(`unknown script step: ${part.slice(0, 100)}`);
  }
  return { steps, loop };
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Builds a script from the agent configuration's `llm_provider.script` records. */
export function scriptFromRecords(records: readonly Record<string, unknown>[]): Script {
  const steps: ScriptStep[] = [];
  let loop = false;
  let pending = { chunks: 0, delayMs: 0 };
  for (const record of records) {
    if (record.loop === true) {
      loop = true;
      continue;
    }
    if (typeof record.stream === 'object' && record.stream !== null) {
      const s = record.stream as Record<string, unknown>;
      pending = { chunks: num(s.count, 0), delayMs: num(s.delay_ms, 0) };
      continue;
    }
    const timing = {
      chunks: num(record.chunks, pending.chunks),
      delayMs: num(record.delay_ms, pending.delayMs),
      costUsd: num(record.cost_usd, 0),
    };
    pending = { chunks: 0, delayMs: 0 };
    if (typeof record.tool === 'string') {
      const args = typeof record.args === 'object' && record.args !== null ? record.args : {};
      steps.push({ action: { kind: 'tool', tool: record.tool, args: args as Record<string, unknown> }, ...timing });
    } else if (record.inspect === true) {
      steps.push({ action: { kind: 'inspect' }, ...timing });
    } else if ('finish' in record) {
      const answer = typeof record.finish === 'string' ? record.finish : undefined;
      steps.push({ action: { kind: 'finish', answer }, ...timing });
    } else
      throw new ScriptError(`script record needs tool, finish, inspect, stream or loop: ${JSON.stringify(record)}`);
  }
  return { steps, loop };
}

/** The step a script plays at planner step `index` (0-based); `undefined` past its end. */
export function stepAt(script: Script, index: number): ScriptStep | undefined {
  if (script.steps.length === 0) return undefined;
  if (script.loop) return script.steps[index % script.steps.length];
  return script.steps[index];
}

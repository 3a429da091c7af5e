import type { ToolSpec } from '../tools/registry.ts';
import type { Decision } from './provider.ts';

/**
 * Decisions without native tool calls (output modes `json` and `text`): the
 * system prompt describes the tools and one JSON reply shape, and the
 * answer's first JSON object is read back as the decision.
 */

/** The instruction appended to the system prompt when the model cannot call tools natively. */
export function decisionInstruction(tools: readonly ToolSpec[]): string {
  const list = tools.map((t) => `- ${t.name}: ${t.description} Arguments schema: ${JSON.stringify(t.parameters)}`);
  return [
    'Reply with exactly one JSON object and nothing else.',
    'To call a tool: {"tool": "<name>", "arguments": {...}}. To answer: {"answer": "<text>"}.',
    ...(list.length === 0 ? [] : ['Tools:', ...list]),
  ].join('\n');
}

/** The first balanced `{…}` of `text` (strings and escapes respected), if any. */
function firstObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let quoted = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/**
 * The decision a `json` or `text` mode answer states: `{"tool", "arguments"}`
 * is a tool call (arguments that are not an object: `args` undefined, an
 * invalid call the planner repairs); anything else finishes, with `answer`
 * when the object has one and the whole text otherwise.
 */
export function parseTextDecision(content: string, callId: string): Decision {
  const raw = firstObject(content);
  let value: unknown;
  try {
    value = raw === undefined ? undefined : JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null) return { kind: 'finish', answer: content };
  const record = value as Record<string, unknown>;
  if (typeof record.tool === 'string' && record.tool !== '') {
    const args = record.arguments ?? {};
    const isObject = typeof args === 'object' && args !== null && !Array.isArray(args);
    return {
      kind: 'tool_call',
      callId,
      tool: record.tool,
      args: isObject ? (args as Record<string, unknown>) : undefined,
      rawArgs: JSON.stringify(args),
    };
  }
  return { kind: 'finish', answer: typeof record.answer === 'string' ? record.answer : content };
}

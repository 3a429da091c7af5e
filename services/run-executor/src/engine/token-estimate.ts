import { createRequire } from 'node:module';
import type { ChatMessage } from '../providers/provider.ts';

/**
 * Token counts of a prompt, for the context window (`context-window.ts`).
 * OpenAI model families are counted with their own encoding from
 * `gpt-tokenizer` (`o200k_base`: gpt-4o, gpt-4.1, gpt-5, o1, o3, o4;
 * `cl100k_base`: gpt-4, gpt-3.5-turbo), loaded on the first count that
 * needs it (several MB of ranks, never at boot); other models are left to
 * the 4-characters-a-token estimate of `context-window.ts`. Counts are kept per message object (the run's
 * messages are not rewritten, only replaced) and per text for the system
 * prompt and the tools' JSON, so a step's estimate, and each candidate of a
 * compression, counts only what is new.
 */

export type Encoding = 'o200k_base' | 'cl100k_base';

/** Model name prefixes and their encodings (first match wins). */
const ENCODINGS: readonly (readonly [string, Encoding])[] = [
  ['gpt-4o', 'o200k_base'],
  ['gpt-4.1', 'o200k_base'],
  ['gpt-4.5', 'o200k_base'],
  ['gpt-5', 'o200k_base'],
  ['o1', 'o200k_base'],
  ['o3', 'o200k_base'],
  ['o4', 'o200k_base'],
  ['gpt-4', 'cl100k_base'],
  ['gpt-3.5-turbo', 'cl100k_base'],
];

/** Tokens a chat message costs beside its content (role and separators, as OpenAI counts them). */
const MESSAGE_OVERHEAD_TOKENS = 3;

/** The encoding of `model`, when it is an OpenAI family's. */
export function encodingOf(model: string): Encoding | undefined {
  return ENCODINGS.find(([prefix]) => model.startsWith(prefix))?.[1];
}

type Counter = (text: string) => number;
const require = createRequire(import.meta.url);
const counters = new Map<Encoding, Counter>();

function counterOf(encoding: Encoding): Counter {
  let counter = counters.get(encoding);
  if (counter === undefined) {
    const loaded = require(`gpt-tokenizer/cjs/encoding/${encoding}`) as { countTokens: Counter };
    counter = (text) => loaded.countTokens(text);
    counters.set(encoding, counter);
  }
  return counter;
}

const byMessage = new WeakMap<
  ChatMessage,
  { readonly encoding: Encoding; readonly content: string; readonly tokens: number }
>();
/** Texts counted lately (system prompts, tools' JSON), by encoding and text; bounded. */
const byText = new Map<string, number>();
const TEXTS_KEPT = 64;

/** The tokens of `text` in `encoding`, cached. */
export function textTokens(text: string, encoding: Encoding): number {
  if (text.length === 0) return 0;
  const key = `${encoding}\u0000${text}`;
  const cached = byText.get(key);
  if (cached !== undefined) return cached;
  const tokens = counterOf(encoding)(text);
  byText.set(key, tokens);
  if (byText.size > TEXTS_KEPT) byText.delete(byText.keys().next().value as string);
  return tokens;
}

/** The tokens of one message in `encoding` (content, tool call, overhead), cached on the message. */
export function messageTokens(message: ChatMessage, encoding: Encoding): number {
  const cached = byMessage.get(message);
  if (cached !== undefined && cached.encoding === encoding && cached.content === message.content) return cached.tokens;
  const count = counterOf(encoding);
  const call = message.tool_call;
  const callTokens = call === undefined ? 0 : count(`${call.name}${JSON.stringify(call.args)}`);
  const tokens = count(message.content) + callTokens + MESSAGE_OVERHEAD_TOKENS;
  byMessage.set(message, { encoding, content: message.content, tokens });
  return tokens;
}

import { parseDirective, scriptFromRecords, stepAt } from './script.ts';
import type { Script } from './script.ts';
import { abortError, estimateTokens } from './provider.ts';
import type {
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  ContentPart,
  Decision,
  LlmProvider,
} from './provider.ts';
import { createHash } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';

/**
 * The `scripted` provider: deterministic and offline. It plays the agent
 * configuration's script, else the query's `#script` directive, else echoes
 * the query in a few chunks and finishes. Its reasoning text is a digest of
 * what it was given (the goal and the messages new since its last decision),
 * so a test can see a redirect, injected context or user message reach the
 * next prompt on `planner.decision` ReasoningTrace. An `inspect` step
 * reports the whole request instead ({@link inspection}): the system prompt,
 * the parameters and the tools, so a test sees what every configuration
 * layer, governance and memory changed. A message's parts (input images)
 * are reported too, one line each ({@link describePart}): the image's bytes
 * as a size and a digest, never the bytes.
 */

export const SCRIPTED_MODEL = 'scripted';
const MAX_DIGEST_CHARS = 2_000;

/** Waits `ms`; rejects with the signal's abort error when it aborts first. */
async function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw abortError(signal);
  if (ms <= 0) return;
  await wait(ms, undefined, { signal }).catch(() => {
    throw abortError(signal);
  });
}

/** Messages after the last assistant message: what is new to this step. */
function newMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  let i = messages.length;
  while (i > 0 && messages[i - 1]?.role !== 'assistant') i--;
  return messages.slice(i);
}

/** Earlier turns of the session in a prompt: the user/assistant pairs before the run's query. */
function earlierTurns(request: Pick<CompletionRequest, 'query' | 'messages'>): number {
  const queryAt = request.messages.findIndex((m) => m.role === 'user' && m.content === request.query);
  return queryAt <= 0 ? 0 : Math.floor(queryAt / 2);
}

/** One part as the scripted provider reports it: `image <id> <mime> <n> bytes sha256:<hex 12>`, `file <file id> <id>`, …. */
export function describePart(part: ContentPart): string {
  switch (part.type) {
    case 'image': {
      const bytes = Buffer.from(part.data_url.slice(part.data_url.indexOf(',') + 1), 'base64');
      const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
      return `image ${part.artifact_id} ${part.mime} ${bytes.length} bytes sha256:${digest}`;
    }
    case 'file':
      return `file ${part.file_id} ${part.artifact_id} ${part.mime}`;
    case 'artifact':
      return `artifact ${part.artifact_id} ${part.mime}`;
    case 'text':
      return `text ${part.text}`;
  }
}

/** The parts of every message, described, in order. */
function describedParts(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => (m.parts ?? []).map(describePart));
}

/** `goal: …`, `history: n turns` when the session has earlier turns, then one line per new message (`tool: …`, `context: …`, `user: …`) and per part of it (`part: …`). */
export function promptDigest(request: Pick<CompletionRequest, 'goal' | 'query' | 'messages'>): string {
  const lines = [`goal: ${request.goal}`];
  const turns = earlierTurns(request);
  if (turns > 0) lines.push(`history: ${turns} turns`);
  for (const m of newMessages(request.messages)) {
    const role = m.role === 'system' ? 'context' : m.role;
    lines.push(`${role}: ${m.content}`);
    for (const part of m.parts ?? []) lines.push(`part: ${describePart(part)}`);
  }
  const digest = lines.join('\n');
  return digest.length > MAX_DIGEST_CHARS ? `${digest.slice(0, MAX_DIGEST_CHARS)}…` : digest;
}

/** What an `inspect` step reports: the JSON of the request's system prompt, parameters, tools, message count and parts. */
export function inspection(request: Pick<CompletionRequest, 'system' | 'params' | 'tools' | 'messages'>): string {
  return JSON.stringify({
    system: request.system,
    params: request.params,
    tools: request.tools.map((t) => t.name),
    messages: request.messages.length,
    parts: describedParts(request.messages),
  });
}

/** Splits `text` into at most `parts` non-empty pieces. */
function pieces(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function resolveScript(records: readonly Record<string, unknown>[] | undefined, query: string): Script | undefined {
  if (records !== undefined && records.length > 0) return scriptFromRecords(records);
  return parseDirective(query);
}

/** Creates a scripted provider; `script` is the agent configuration's, when it has one. */
export function createScriptedProvider(script?: readonly Record<string, unknown>[]): LlmProvider {
  return {
    kind: 'scripted',
    async complete(request: CompletionRequest): Promise<CompletionResult> {
      const { signal, onChunk } = request;
      if (signal.aborted) throw abortError(signal);
      const plan = resolveScript(script, request.query);
      const step = plan === undefined ? undefined : stepAt(plan, request.step);
      const inspected = step?.action.kind === 'inspect' ? inspection(request) : undefined;
      const digest = promptDigest(request);
      let output = '';
      const emit = (delta: string, kind: 'text' | 'reasoning' | 'tool_call'): void => {
        output += delta;
        onChunk(delta, kind);
      };
      for (let i = 0; i < (step?.chunks ?? 0); i++) {
        await delay(step?.delayMs ?? 0, signal);
        emit(`chunk ${i + 1} `, 'reasoning');
      }
      let decision: Decision;
      if (plan === undefined) {
        // No script at all: echo the query back in a few chunks.
        for (const piece of pieces(request.goal, 3)) emit(piece, 'text');
        decision = { kind: 'finish', answer: request.goal };
      } else if (step?.action.kind === 'inspect') {
        emit(inspected ?? '', 'reasoning');
        emit('inspected', 'text');
        decision = { kind: 'finish', answer: 'inspected' };
      } else if (step === undefined || step.action.kind === 'finish') {
        const answer = step?.action.kind === 'finish' ? (step.action.answer ?? 'done') : 'done';
        emit(digest, 'reasoning');
        emit(answer, 'text');
        decision = { kind: 'finish', answer };
      } else {
        const rawArgs = JSON.stringify(step.action.args);
        emit(digest, 'reasoning');
        emit(`${step.action.tool} ${rawArgs}`, 'tool_call');
        decision = {
          kind: 'tool_call',
          callId: `call_${request.step + 1}`,
          tool: step.action.tool,
          args: step.action.args,
          rawArgs,
        };
      }
      if (signal.aborted) throw abortError(signal);
      const prompt = request.system + request.messages.map((m) => m.content).join('\n');
      return {
        decision,
        reasoning: plan === undefined ? '' : (inspected ?? digest),
        // The model the run asked for, so that governance meters the model it admitted.
        model: request.params.model ?? SCRIPTED_MODEL,
        usage: { input_tokens: estimateTokens(prompt), output_tokens: estimateTokens(output) },
        costUsd: step?.costUsd ?? 0,
        contextWindowTokens: 0,
      };
    },
  };
}

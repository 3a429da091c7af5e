import { KeyedSeries, SECONDS_BUCKETS, SERVICE_ATTRIBUTE, SpanKind, histogramFamily, withSpan } from '@ars/telemetry';
import type { BoundHistogram, Span } from '@ars/telemetry';
import type { ChatMessage, ChunkKind, CompletionResult, ContentPart } from '../providers/provider.ts';
import { RUN_EXECUTOR } from './run-spans.ts';

/**
 * The spans of a run's outside calls: one per LLM call, after the OTel
 * GenAI semantic conventions (`chat <model>`, CLIENT, `gen_ai.*`
 * attributes, the first token as an event; the prompt and the answer
 * only when the operator opted in, see {@link LlmCallFacts.content}), and
 * one per tool call (MCP included). Also the GenAI client
 * duration metric, recorded around every provider call whether or not
 * anything traces.
 */

export const LLM_OPERATION_DURATION = histogramFamily('gen_ai.client.operation.duration', {
  description: 'Duration of each LLM provider call (one attempt), by model; failed ones with error.type',
  unit: 's',
  boundaries: SECONDS_BUCKETS,
});

interface ModelDuration {
  readonly ok: BoundHistogram;
  readonly failed: BoundHistogram;
}

const durations = new KeyedSeries<ModelDuration>((model) => {
  const base = { [SERVICE_ATTRIBUTE]: RUN_EXECUTOR, 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model };
  return {
    ok: LLM_OPERATION_DURATION.bind(base),
    failed: LLM_OPERATION_DURATION.bind({ ...base, 'error.type': 'provider_error' }),
  };
});

/** What the LLM span names. */
export interface LlmCallFacts {
  /** The provider's kind (`openai`, `scripted`): `gen_ai.system` and `gen_ai.provider.name`. */
  readonly system: string;
  /** The installation name (`ars.llm.provider`). */
  readonly provider: string;
  readonly model: string;
  readonly maxTokens: number;
  /** `<run>:<step>:<attempt>:<claim>`, as the cost's call id. */
  readonly callId: string;
  /**
   * The prompt, given only when the operator opted in
   * (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT): then the span
   * carries it and the answer as the GenAI conventions' JSON attributes.
   */
  readonly content?: { readonly system: string; readonly messages: readonly ChatMessage[] } | undefined;
}

/** A message part in the GenAI conventions' shape; an image is a reference to its artifact, never its bytes. */
function partOf(part: ContentPart): Record<string, unknown> {
  if (part.type === 'text') return { type: 'text', content: part.text };
  const reference = { type: 'uri', modality: 'image', mime_type: part.mime, uri: `artifact://${part.artifact_id}` };
  return part.type === 'file' ? { ...reference, file_id: part.file_id } : reference;
}

/** `gen_ai.input.messages`: the conversation as the model was given it. */
export function inputMessages(messages: readonly ChatMessage[]): string {
  return JSON.stringify(
    messages.map((m) => {
      if (m.role === 'tool') {
        return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.tool_call_id, response: m.content }] };
      }
      const parts: Record<string, unknown>[] = m.content === '' ? [] : [{ type: 'text', content: m.content }];
      for (const part of m.parts ?? []) parts.push(partOf(part));
      if (m.tool_call !== undefined) {
        parts.push({ type: 'tool_call', id: m.tool_call.id, name: m.tool_call.name, arguments: m.tool_call.args });
      }
      return { role: m.role, parts };
    }),
  );
}

/** `gen_ai.output.messages`: the model's answer (its reasoning, then its decision). */
export function outputMessages(result: Pick<CompletionResult, 'decision' | 'reasoning'>): string {
  const parts: Record<string, unknown>[] =
    result.reasoning === '' ? [] : [{ type: 'reasoning', content: result.reasoning }];
  const { decision } = result;
  if (decision.kind === 'finish') parts.push({ type: 'text', content: decision.answer });
  else
    parts.push({
      type: 'tool_call',
      id: decision.callId,
      name: decision.tool,
      arguments: decision.args ?? decision.rawArgs,
    });
  const finishReason = decision.kind === 'finish' ? 'stop' : 'tool_call';
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason }]);
}

type OnChunk = (delta: string, kind: ChunkKind) => void;

/** `onChunk` that also marks the first token on `span` (a recording span only). */
function markingFirstToken(span: Span, onChunk: OnChunk, started: number): OnChunk {
  let first = true;
  return (delta, kind) => {
    if (first) {
      first = false;
      span.addEvent('gen_ai.first_token', {
        'gen_ai.response.time_to_first_token': (performance.now() - started) / 1000,
      });
    }
    onChunk(delta, kind);
  };
}

/**
 * Makes one provider call (`call`, given the `onChunk` to stream through)
 * inside its span and times it into `gen_ai.client.operation.duration`.
 */
export async function withLlmSpan(
  facts: LlmCallFacts,
  onChunk: OnChunk,
  call: (onChunk: OnChunk) => Promise<CompletionResult>,
): Promise<CompletionResult> {
  const series = durations.get(facts.model);
  const started = performance.now();
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': facts.system,
    'gen_ai.provider.name': facts.system,
    'gen_ai.request.model': facts.model,
    'gen_ai.request.max_tokens': facts.maxTokens,
    'ars.llm.provider': facts.provider,
    'ars.llm.call_id': facts.callId,
  };
  try {
    const result = await withSpan(
      `chat ${facts.model}`,
      { service: RUN_EXECUTOR, kind: SpanKind.CLIENT, attributes },
      async (span) => {
        const recording = span.isRecording();
        if (recording && facts.content !== undefined) {
          span.setAttributes({
            'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: facts.content.system }]),
            'gen_ai.input.messages': inputMessages(facts.content.messages),
          });
        }
        const result = await call(recording ? markingFirstToken(span, onChunk, started) : onChunk);
        if (recording) {
          span.setAttributes({
            'gen_ai.response.model': result.model,
            'gen_ai.usage.input_tokens': result.usage.input_tokens,
            'gen_ai.usage.output_tokens': result.usage.output_tokens,
            'gen_ai.response.finish_reasons': [result.decision.kind === 'finish' ? 'stop' : 'tool_calls'],
          });
          if (facts.content !== undefined) span.setAttribute('gen_ai.output.messages', outputMessages(result));
        }
        return result;
      },
    );
    series.ok.record((performance.now() - started) / 1000);
    return result;
  } catch (error) {
    series.failed.record((performance.now() - started) / 1000);
    throw error;
  }
}

/** What the tool span names. */
export interface ToolCallFacts {
  readonly tool: string;
  /** `builtin`, or the MCP transport. */
  readonly transport: string;
  /** `builtin`, or the MCP server id. */
  readonly source: string;
  readonly callId: string;
}

/**
 * Runs one tool call (every attempt of its policy) inside an
 * `execute_tool <name>` span (the GenAI conventions' tool span); an MCP
 * call's span carries its server. `outcome` maps the call's result to
 * `ars.tool.outcome`.
 */
export function withToolSpan<T>(
  facts: ToolCallFacts,
  fn: () => Promise<T>,
  outcome: (result: T) => string,
): Promise<T> {
  const mcp = facts.transport !== 'builtin';
  return withSpan(
    `execute_tool ${facts.tool}`,
    {
      service: RUN_EXECUTOR,
      kind: mcp ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': facts.tool,
        'gen_ai.tool.call.id': facts.callId,
        'ars.tool.transport': facts.transport,
        ...(mcp ? { 'ars.mcp.server': facts.source } : {}),
      },
    },
    async (span) => {
      const result = await fn();
      if (span.isRecording()) span.setAttribute('ars.tool.outcome', outcome(result));
      return result;
    },
  );
}

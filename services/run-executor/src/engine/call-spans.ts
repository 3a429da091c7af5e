import { KeyedSeries, SECONDS_BUCKETS, SERVICE_ATTRIBUTE, SpanKind, histogramFamily, withSpan } from '@ars/telemetry';
import type { BoundHistogram, Span } from '@ars/telemetry';
import type { ChunkKind, CompletionResult } from '../providers/provider.ts';
import { RUN_EXECUTOR } from './run-spans.ts';

/**
 * The spans of a run's outside calls: one per LLM call, after the OTel
 * GenAI semantic conventions (`chat <model>`, CLIENT, `gen_ai.*`
 * attributes, the first token as an event; never the prompt or the
 * answer), and one per tool call (MCP included). Also the GenAI client
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
        const result = await call(recording ? markingFirstToken(span, onChunk, started) : onChunk);
        if (recording) {
          span.setAttributes({
            'gen_ai.response.model': result.model,
            'gen_ai.usage.input_tokens': result.usage.input_tokens,
            'gen_ai.usage.output_tokens': result.usage.output_tokens,
            'gen_ai.response.finish_reasons': [result.decision.kind === 'finish' ? 'stop' : 'tool_calls'],
          });
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

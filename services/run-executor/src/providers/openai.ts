import { OpenAI } from 'openai';
import { estimateTokens } from './provider.ts';
import type { ChatMessage, CompletionRequest, CompletionResult, Decision, LlmProvider } from './provider.ts';

/**
 * The `openai` provider: any OpenAI-compatible chat-completions server
 * (OpenAI, vLLM, Ollama, LM Studio) through the official SDK, streamed, with
 * tool calls. One tool call is executed per planner step: when the model asks
 * for several, the first is kept and the assistant message records only it.
 */

type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolParam = OpenAI.Chat.Completions.ChatCompletionTool;

/** Settings of one provider installation (from the agent configuration). */
export interface OpenAiSettings {
  readonly baseUrl?: string | undefined;
  readonly apiKey: string;
  /** Used when the agent's `llm_params.model` is absent. */
  readonly model: string;
  /** Per-request timeout in ms. @default 120000 */
  readonly timeoutMs?: number;
}

/** Maps the run's messages to the chat-completions wire shape. */
export function toWireMessages(system: string, messages: readonly ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  if (system !== '') out.push({ role: 'system', content: system });
  for (const m of messages) {
    if (m.role === 'assistant' && m.tool_call !== undefined) {
      out.push({
        role: 'assistant',
        content: m.content === '' ? null : m.content,
        tool_calls: [
          {
            id: m.tool_call.id,
            type: 'function',
            function: { name: m.tool_call.name, arguments: JSON.stringify(m.tool_call.args) },
          },
        ],
      });
    } else if (m.role === 'tool') {
      out.push({ role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content });
    } else {
      out.push({ role: m.role, content: m.content } as MessageParam);
    }
  }
  return out;
}

function parseArgs(raw: string): Record<string, unknown> | undefined {
  if (raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

interface ToolCallAccumulator {
  id: string;
  name: string;
  args: string;
}

const clients = new Map<string, OpenAI>();

function clientFor(settings: OpenAiSettings): OpenAI {
  const key = JSON.stringify([settings.baseUrl ?? '', settings.apiKey, settings.timeoutMs ?? 0]);
  let client = clients.get(key);
  if (client === undefined) {
    client = new OpenAI({
      apiKey: settings.apiKey,
      ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
      timeout: settings.timeoutMs ?? 120_000,
      maxRetries: 1,
    });
    clients.set(key, client);
  }
  return client;
}

/** Creates an OpenAI-compatible provider. */
export function createOpenAiProvider(settings: OpenAiSettings): LlmProvider {
  const client = clientFor(settings);
  return {
    kind: 'openai',
    async complete(request: CompletionRequest): Promise<CompletionResult> {
      const { params, onChunk } = request;
      const model = params.model ?? settings.model;
      const tools: ToolParam[] = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      const stream = await client.chat.completions.create(
        {
          model,
          messages: toWireMessages(request.system, request.messages),
          stream: true,
          stream_options: { include_usage: true },
          ...(tools.length > 0 ? { tools } : {}),
          ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
          ...(params.top_p === undefined ? {} : { top_p: params.top_p }),
          ...(params.max_tokens === undefined ? {} : { max_tokens: params.max_tokens }),
          ...(params.reasoning_effort === undefined
            ? {}
            : { reasoning_effort: params.reasoning_effort as OpenAI.ReasoningEffort }),
          ...(params.stop === undefined ? {} : { stop: [...params.stop] }),
        },
        { signal: request.signal },
      );
      let content = '';
      let reasoning = '';
      let usage: { input_tokens: number; output_tokens: number } | undefined;
      const calls: ToolCallAccumulator[] = [];
      for await (const chunk of stream) {
        if (chunk.usage) {
          usage = { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens };
        }
        const delta = chunk.choices[0]?.delta as
          | (OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null })
          | undefined;
        if (delta === undefined) continue;
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
          reasoning += delta.reasoning_content;
          onChunk(delta.reasoning_content, 'reasoning');
        }
        if (typeof delta.content === 'string' && delta.content !== '') {
          content += delta.content;
          onChunk(delta.content, 'text');
        }
        for (const call of delta.tool_calls ?? []) {
          const acc = (calls[call.index] ??= { id: '', name: '', args: '' });
          if (call.id) acc.id = call.id;
          if (call.function?.name) acc.name += call.function.name;
          if (call.function?.arguments) {
            acc.args += call.function.arguments;
            onChunk(call.function.arguments, 'tool_call');
          }
        }
      }
      const first = calls.find((c) => c !== undefined && c.name !== '');
      const decision: Decision =
        first === undefined
          ? { kind: 'finish', answer: content }
          : {
              kind: 'tool_call',
              callId: first.id === '' ? `call_${request.step + 1}` : first.id,
              tool: first.name,
              args: parseArgs(first.args),
              rawArgs: first.args,
            };
      const prompt = request.system + request.messages.map((m) => m.content).join('\n');
      return {
        decision,
        // Text that came with a tool call is the model's reasoning for it.
        reasoning: first === undefined ? reasoning : `${reasoning}${content}`,
        model,
        usage: usage ?? {
          input_tokens: estimateTokens(prompt),
          output_tokens: estimateTokens(content + reasoning + (first?.args ?? '')),
        },
        costUsd: 0,
        contextWindowTokens: 0,
      };
    },
  };
}

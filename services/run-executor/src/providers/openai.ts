import type { OpenAI } from 'openai';
import type * as OpenAiModule from 'openai';
import { abortError, ContextLengthExceeded, estimateTokens, OutputModeRefused, partText } from './provider.ts';
import type {
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  ContentPart,
  Decision,
  LlmProvider,
  OutputMode,
  ProviderFileUpload,
  TokenUsage,
} from './provider.ts';
import { decisionInstruction, parseTextDecision } from './text-decision.ts';

/**
 * The `openai` provider: any OpenAI-compatible chat-completions server
 * (OpenAI, vLLM, Ollama, LM Studio) through the official SDK, streamed, with
 * tool calls. One tool call is executed per planner step: when the model asks
 * for several, the first is kept and the assistant message records only it.
 * A call succeeds only with a finished response (a chunk carrying a
 * `finish_reason`) within its deadlines; a cut-short, stalled or overlong
 * stream throws {@link OpenAiResponseError}, and one stopped by the run's
 * signal throws the abort. A response the provider's filter withheld
 * (`content_filter`) throws too; one that reached `max_tokens` (`length`) is
 * the model's answer up to that cap, and a tool call cut there has arguments
 * that do not parse (`tool.invalid_args`, fed back to the model).
 *
 * Output modes: `tools` sends the tools natively; `json` and `text` describe
 * them in the system prompt and read the answer's JSON object back
 * (`text-decision.ts`), `json` under `response_format: json_object`. A 400
 * refusing tools or the response format throws {@link OutputModeRefused}; a
 * 400 with `code: context_length_exceeded` throws {@link ContextLengthExceeded}.
 *
 * Input images: a user message's parts follow its text as content parts —
 * an image as an `image_url` data URL, a provider file as a `file` part
 * naming its id ({@link PROVIDER_FILE_PURPOSE} uploads through `POST
 * /v1/files`, expiring after {@link PROVIDER_FILE_TTL_SECONDS}).
 */

type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** The `purpose` of uploaded input files: OpenAI's for files given to a model as input. */
export const PROVIDER_FILE_PURPOSE = 'user_data';
/** Uploaded input files expire after 30 days (OpenAI's longest), so that none stays for ever. */
export const PROVIDER_FILE_TTL_SECONDS = 30 * 24 * 3600;
type ToolParam = OpenAI.Chat.Completions.ChatCompletionTool;

/** Settings of one provider installation (from the agent configuration). */
export interface OpenAiSettings {
  readonly baseUrl?: string | undefined;
  readonly apiKey: string;
  /** Used when the agent's `llm_params.model` is absent. */
  readonly model: string;
  /**
   * Timeout in ms for the response's headers (the SDK's, retried once), then
   * from the headers to the first streamed chunk and between chunks.
   * @default 120000
   */
  readonly timeoutMs?: number;
  /** Most ms a whole streamed body may take. @default 10 × `timeoutMs` */
  readonly streamMaxMs?: number;
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
    } else if (m.role === 'user' && m.parts !== undefined && m.parts.length > 0) {
      out.push({ role: 'user', content: [{ type: 'text', text: m.content }, ...m.parts.map(wirePart)] });
    } else {
      out.push({ role: m.role, content: m.content } as MessageParam);
    }
  }
  return out;
}

/** A message part as a chat-completions content part. */
function wirePart(part: ContentPart): UserContentPart {
  if (part.type === 'image') return { type: 'image_url', image_url: { url: part.data_url } };
  if (part.type === 'file') return { type: 'file', file: { file_id: part.file_id } };
  return { type: 'text', text: partText(part) };
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

/** What a streamed response said, accumulated chunk by chunk. */
interface StreamRead {
  content: string;
  reasoning: string;
  calls: ToolCallAccumulator[];
  usage: TokenUsage | undefined;
  /** The `finish_reason` a chunk carried: the model ended its answer (a stream cut short never says so). */
  finishReason: string | undefined;
}

/** Why a response could not be used; the call fails like any provider error (failover, else `llm_error`). */
export type ResponseFailure = 'stalled' | 'too_long' | 'unfinished' | 'content_filter';

/** A streamed response that stalled, ran past its deadline, or ended without finishing. */
export class OpenAiResponseError extends Error {
  readonly failure: ResponseFailure;
  constructor(failure: ResponseFailure, message: string) {
    super(message);
    this.name = 'OpenAiResponseError';
    this.failure = failure;
  }
}

/** How many per-request timeouts a whole streamed body may take, by default. */
const STREAM_MAX_TIMEOUTS = 10;
const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * The deadlines of a streamed body, which the SDK's timeout (headers only)
 * does not cover: `idleMs` from the headers to the first chunk and between
 * chunks (SSE comments are not chunks), `totalMs` for the whole body.
 */
interface StreamDeadline {
  /** Aborted when a deadline passes. */
  readonly signal: AbortSignal;
  /** The headers arrived: both deadlines start. */
  start(): void;
  /** A chunk arrived: the idle deadline starts again. */
  touch(): void;
  /** The deadline that passed, if one did. */
  expired(): OpenAiResponseError | undefined;
  clear(): void;
}

function streamDeadline(idleMs: number, totalMs: number): StreamDeadline {
  const controller = new AbortController();
  let expired: OpenAiResponseError | undefined;
  let idle: NodeJS.Timeout | undefined;
  let total: NodeJS.Timeout | undefined;
  const expire = (failure: ResponseFailure, message: string): void => {
    expired ??= new OpenAiResponseError(failure, message);
    controller.abort(expired);
  };
  return {
    signal: controller.signal,
    start() {
      idle = setTimeout(() => expire('stalled', `no chunk of the response for ${idleMs} ms`), idleMs);
      total = setTimeout(() => expire('too_long', `the response took longer than ${totalMs} ms`), totalMs);
    },
    touch: () => void idle?.refresh(),
    expired: () => expired,
    clear() {
      clearTimeout(idle);
      clearTimeout(total);
    },
  };
}

type OpenAiSdk = typeof OpenAiModule;

let sdkImport: Promise<OpenAiSdk> | undefined;
/** The SDK once imported: an SDK error can only exist after that. */
let importedSdk: OpenAiSdk | undefined;

/**
 * The SDK, imported by the first call of an openai provider rather than
 * with this module: it is about 1.4 MB of modules (some 150 ms and tens of MB
 * of a process's start) that a system running only scripted agents never
 * needs. A failed import is tried again by the next call.
 */
function openAiSdk(): Promise<OpenAiSdk> {
  sdkImport ??= import('openai').then(
    (sdk) => (importedSdk = sdk),
    (error: unknown) => {
      sdkImport = undefined;
      throw error;
    },
  );
  return sdkImport;
}

/**
 * SDK clients by server, key and timeout, most recently used last. Bounded:
 * every tenant's provider key makes one, and a process lives long.
 */
const clients = new Map<string, OpenAI>();
export const MAX_CACHED_CLIENTS = 64;

/** The number of SDK clients kept (tests). */
export function cachedClientCount(): number {
  return clients.size;
}

/** The SDK client of `settings`, made by its first call. */
async function clientFor(settings: OpenAiSettings): Promise<OpenAI> {
  const { OpenAI: Client } = await openAiSdk();
  const key = JSON.stringify([settings.baseUrl ?? '', settings.apiKey, settings.timeoutMs ?? 0]);
  let client = clients.get(key);
  if (client === undefined) {
    client = new Client({
      apiKey: settings.apiKey,
      ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
      timeout: settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRetries: 1,
      // The SDK would write to the console; every failure reaches the run's own log as the error it throws.
      logLevel: 'off',
    });
  } else {
    clients.delete(key);
  }
  clients.set(key, client);
  if (clients.size > MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value as string);
  return client;
}

/** The chat-completions request of one call (streamed, with usage). */
function requestBody(
  request: CompletionRequest,
  model: string,
): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const { params } = request;
  const mode = request.outputMode ?? 'tools';
  const tools: ToolParam[] =
    mode !== 'tools'
      ? []
      : request.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        }));
  const system =
    mode === 'tools'
      ? request.system
      : [request.system, decisionInstruction(request.tools)].filter(Boolean).join('\n\n');
  return {
    model,
    messages: toWireMessages(system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { tools } : {}),
    ...(mode === 'json' ? { response_format: { type: 'json_object' as const } } : {}),
    ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
    ...(params.top_p === undefined ? {} : { top_p: params.top_p }),
    ...(params.max_tokens === undefined ? {} : { max_tokens: params.max_tokens }),
    ...(params.reasoning_effort === undefined
      ? {}
      : { reasoning_effort: params.reasoning_effort as OpenAI.ReasoningEffort }),
    ...(params.stop === undefined ? {} : { stop: [...params.stop] }),
  };
}

/** Reads the stream to its end, passing each piece to `onChunk`. */
async function readStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
  deadline: StreamDeadline,
  onChunk: CompletionRequest['onChunk'],
): Promise<StreamRead> {
  const read: StreamRead = { content: '', reasoning: '', calls: [], usage: undefined, finishReason: undefined };
  for await (const chunk of stream) {
    deadline.touch();
    if (chunk.usage) {
      read.usage = { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens };
    }
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    if (choice.finish_reason) read.finishReason = choice.finish_reason;
    const delta = choice.delta as
      (OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null }) | undefined;
    if (delta === undefined) continue;
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      read.reasoning += delta.reasoning_content;
      onChunk(delta.reasoning_content, 'reasoning');
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      read.content += delta.content;
      onChunk(delta.content, 'text');
    }
    for (const call of delta.tool_calls ?? []) {
      const acc = (read.calls[call.index] ??= { id: '', name: '', args: '' });
      if (call.id) acc.id = call.id;
      if (call.function?.name) acc.name += call.function.name;
      if (call.function?.arguments) {
        acc.args += call.function.arguments;
        onChunk(call.function.arguments, 'tool_call');
      }
    }
  }
  return read;
}

/** The call's result from a finished response: the first tool call, else the answer. */
function resultOf(request: CompletionRequest, model: string, read: StreamRead): CompletionResult {
  const { content, reasoning } = read;
  const first = read.calls.find((c) => c !== undefined && c.name !== '');
  const callId = `call_${request.step + 1}`;
  const decision: Decision =
    first === undefined
      ? (request.outputMode ?? 'tools') === 'tools'
        ? { kind: 'finish', answer: content }
        : parseTextDecision(content, callId)
      : {
          kind: 'tool_call',
          callId: first.id === '' ? callId : first.id,
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
    usage: read.usage ?? {
      input_tokens: estimateTokens(prompt),
      output_tokens: estimateTokens(content + reasoning + (first?.args ?? '')),
    },
    costUsd: 0,
    contextWindowTokens: 0,
  };
}

const TOOLS_REFUSED =
  /\b(tools?|tool_choice|function[ _]?call(?:ing|s)?)\b.*\b(not supported|unsupported|does not support)\b|\b(not support|does not support|unsupported)\b.*\b(tools?|function[ _]?call(?:ing|s)?)\b/i;
const FORMAT_REFUSED = /\bresponse_format\b|\bjson[_ ](object|schema|mode)\b/i;

/**
 * What a 400 means for the run: the context window overflowed, or the mode
 * the call asked for (`tools`: native tool calls; `json`: the response
 * format) is refused; undefined for any other error.
 */
export function refusalOf(error: unknown, mode: OutputMode): Error | undefined {
  if (importedSdk === undefined || !(error instanceof importedSdk.APIError) || error.status !== 400) return undefined;
  const message = error.message;
  if (error.code === 'context_length_exceeded') return new ContextLengthExceeded(message);
  if (mode === 'tools' && (error.code === 'tools_not_supported' || TOOLS_REFUSED.test(message))) {
    return new OutputModeRefused(mode, message);
  }
  if (mode === 'json' && FORMAT_REFUSED.test(message)) return new OutputModeRefused(mode, message);
  return undefined;
}

/** Creates an OpenAI-compatible provider. */
export function createOpenAiProvider(settings: OpenAiSettings): LlmProvider {
  const idleMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const totalMs = settings.streamMaxMs ?? idleMs * STREAM_MAX_TIMEOUTS;
  return {
    kind: 'openai',
    async complete(request: CompletionRequest): Promise<CompletionResult> {
      const model = request.params.model ?? settings.model;
      const deadline = streamDeadline(idleMs, totalMs);
      // The SDK ends a stream quietly when its signal aborts: a stopped call must not pass for a finished one.
      const stopped = (): Error | undefined =>
        request.signal.aborted ? abortError(request.signal) : deadline.expired();
      try {
        const client = await clientFor(settings);
        const stream = await client.chat.completions.create(requestBody(request, model), {
          signal: AbortSignal.any([request.signal, deadline.signal]),
        });
        deadline.start();
        const read = await readStream(stream, deadline, request.onChunk);
        const failure = stopped();
        if (failure !== undefined) throw failure;
        if (read.finishReason === undefined) {
          throw new OpenAiResponseError('unfinished', 'the response ended without a finish_reason');
        }
        // Withheld by the provider's filter: what came is not the model's answer (another provider may give one).
        if (read.finishReason === 'content_filter') {
          throw new OpenAiResponseError(
            'content_filter',
            'the provider withheld the response (finish_reason content_filter)',
          );
        }
        return resultOf(request, model, read);
      } catch (error) {
        throw stopped() ?? refusalOf(error, request.outputMode ?? 'tools') ?? error;
      } finally {
        deadline.clear();
      }
    },
    async uploadFile(file: ProviderFileUpload): Promise<string> {
      const [client, { toFile }] = await Promise.all([clientFor(settings), openAiSdk()]);
      const uploaded = await client.files.create(
        {
          file: await toFile(file.bytes, file.filename, { type: file.mime }),
          purpose: PROVIDER_FILE_PURPOSE,
          expires_after: { anchor: 'created_at', seconds: PROVIDER_FILE_TTL_SECONDS },
        },
        { signal: file.signal },
      );
      return uploaded.id;
    },
  };
}

import type { ToolSpec } from '../tools/registry.ts';

/**
 * The LLM provider port: one streamed completion per planner step, ending in
 * a decision (call a tool, or finish with an answer).
 */

/**
 * A part of a user message after its text: one of the run's input
 * artifacts. `artifact` is the run's own placeholder (the engine replaces
 * it before each call with what that provider and model take: `llm-call.ts`);
 * a provider given one shows it as a text reference. `image` carries the
 * bytes as a data URL; `file` names a file uploaded to the provider's file
 * API; `text` is a reference shown instead of content the model cannot take.
 */
export type ContentPart =
  | { readonly type: 'artifact'; readonly artifact_id: string; readonly mime: string }
  | { readonly type: 'image'; readonly artifact_id: string; readonly mime: string; readonly data_url: string }
  | { readonly type: 'file'; readonly artifact_id: string; readonly mime: string; readonly file_id: string }
  | { readonly type: 'text'; readonly text: string };

/** One message of a run's conversation (the system prompt travels separately). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** assistant: the tool call it decided. */
  tool_call?: { id: string; name: string; args: Record<string, unknown> };
  /** tool: the call this message answers. */
  tool_call_id?: string;
  /**
   * user: what follows the text (the run's query carries its input images).
   * Built for each call, never checkpointed: bytes do not enter the run's state.
   */
  parts?: readonly ContentPart[];
}

/** A file for a provider's file API. */
export interface ProviderFileUpload {
  readonly bytes: Uint8Array;
  readonly mime: string;
  /** The name the provider shows (the artifact id). */
  readonly filename: string;
  /** Stops the upload (a hard cancel, a drain). */
  readonly signal: AbortSignal;
}

/** The text a provider shows for a part it does not send as content. */
export function partText(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'artifact':
      return `[input artifact ${part.artifact_id} (${part.mime})]`;
    case 'image':
      return `[image ${part.artifact_id} (${part.mime})]`;
    case 'file':
      return `[file ${part.file_id}: input artifact ${part.artifact_id} (${part.mime})]`;
  }
}

/** `llm.completion.chunk` Kind values. */
export const CHUNK_KINDS = ['text', 'reasoning', 'tool_call'] as const;
export type ChunkKind = (typeof CHUNK_KINDS)[number];

/** LLM parameters passed through to the provider (agent `llm_params`). */
export interface LlmParameters {
  readonly model?: string | undefined;
  readonly temperature?: number | undefined;
  readonly top_p?: number | undefined;
  readonly max_tokens?: number | undefined;
  /** `minimal` | `low` | `medium` | `high` (OpenAI reasoning models). */
  readonly reasoning_effort?: string | undefined;
  readonly stop?: readonly string[] | undefined;
}

/** Which provider a run uses and how to reach it (from the agent configuration). */
export interface ProviderSettings {
  readonly kind: 'scripted' | 'openai';
  /**
   * The installation name (`llm_provider.provider_name`, a failover chain
   * entry's `name`): what governance keys and failover chains call it.
   * Absent: the kind.
   */
  readonly name?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly model?: string | undefined;
  /**
   * openai: the API key, fetched from governance (`_governance.provider_key`)
   * by the installation name; absent: the executor's `LLM_API_KEY`.
   */
  readonly apiKey?: string | undefined;
  /**
   * openai: the URL of the inference broker its key comes from at each call
   * (`llm_provider.inference_broker`); when set, governance's key is not asked.
   */
  readonly inferenceBroker?: string | undefined;
  /** scripted: the agent's script records. */
  readonly script?: readonly Record<string, unknown>[] | undefined;
}

export interface CompletionRequest {
  readonly taskId: string;
  /** 0-based index of this planner step. */
  readonly step: number;
  /** The query the run was started with (fixed for the run's life). */
  readonly query: string;
  /** The current goal (the query until a redirect rewrites it). */
  readonly goal: string;
  readonly system: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  readonly params: LlmParameters;
  /** Aborted by a hard cancel or a drain: stop streaming at once. */
  readonly signal: AbortSignal;
  /** Receives each streamed piece as it arrives. */
  readonly onChunk: (delta: string, kind: ChunkKind) => void;
  /** How the model is asked to decide (see {@link OUTPUT_MODES}). @default 'tools' */
  readonly outputMode?: OutputMode | undefined;
}

/**
 * How a model states its decision, most capable first: native tool calls;
 * a JSON object under a JSON response format; a JSON object in plain text,
 * found by a parser. A provider that refuses a mode is asked again in the next.
 */
export const OUTPUT_MODES = ['tools', 'json', 'text'] as const;
export type OutputMode = (typeof OUTPUT_MODES)[number];

/** The response format kind (`llm.mode_downgraded` From/To) each output mode asks for. */
export const RESPONSE_FORMAT_OF: Readonly<Record<OutputMode, string>> = {
  tools: 'text',
  json: 'json_object',
  text: 'text',
};

/** The provider refused the output mode (tool calls, or a JSON response format) this call asked for. */
export class OutputModeRefused extends Error {
  readonly mode: OutputMode;
  constructor(mode: OutputMode, message: string) {
    super(message);
    this.name = 'OutputModeRefused';
    this.mode = mode;
  }
}

/** The provider refused the prompt as longer than the model's context window (`context_length_exceeded`). */
export class ContextLengthExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContextLengthExceeded';
  }
}

export type Decision =
  | {
      readonly kind: 'tool_call';
      readonly callId: string;
      readonly tool: string;
      /** Parsed arguments; `undefined` when the model's arguments were not a JSON object. */
      readonly args: Record<string, unknown> | undefined;
      readonly rawArgs: string;
    }
  | { readonly kind: 'finish'; readonly answer: string };

export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

export interface CompletionResult {
  readonly decision: Decision;
  /** The reasoning text that preceded the decision (may be empty). */
  readonly reasoning: string;
  readonly model: string;
  readonly usage: TokenUsage;
  /** Cost of the call in USD as the provider reports it (0 when unknown: the engine's price table applies). */
  readonly costUsd: number;
  readonly contextWindowTokens: number;
}

export interface LlmProvider {
  readonly kind: string;
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /**
   * Uploads a file to the provider's file API and returns its file id;
   * absent for a provider without one. Throws on failure or abort.
   */
  uploadFile?(file: ProviderFileUpload): Promise<string>;
}

/** The error a provider throws when `signal` (a hard cancel, a drain) stopped its call. */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });
}

/** Rough token estimate (4 characters a token) for providers that report no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

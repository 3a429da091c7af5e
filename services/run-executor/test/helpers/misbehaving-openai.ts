import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions server on an ephemeral port that misbehaves as real
 * models do, scripted per request: each scenario (the first path segment,
 * `url(name)` is `http://127.0.0.1:<port>/<name>/v1`) plays its replies in
 * order, the last one again for every later request. Streamed (`stream:
 * true`, SSE chunks) or not (one JSON completion), as the request asks.
 */

/** One reply of a scenario. */
export type MisbehavingReply =
  /** A tool call with these raw argument characters (malformed JSON, extra fields, an unknown name). */
  | { readonly kind: 'tool_call'; readonly name: string; readonly arguments: string; readonly delayMs?: number }
  /** An answer (content, `finish_reason: stop`). */
  | { readonly kind: 'answer'; readonly text: string; readonly delayMs?: number }
  /** An HTTP error in OpenAI's shape: `{error: {message, type, code, param}}`. */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message: string;
      readonly code?: string;
      readonly type?: string;
    }
  /** A streamed tool call whose body ends halfway through its arguments (no finish_reason, no `[DONE]`). */
  | { readonly kind: 'cut_tool_call'; readonly name: string; readonly arguments: string };

export const REPLIES = {
  toolCall: (name: string, args: string, delayMs?: number): MisbehavingReply => ({
    kind: 'tool_call',
    name,
    arguments: args,
    ...(delayMs === undefined ? {} : { delayMs }),
  }),
  answer: (text: string, delayMs?: number): MisbehavingReply => ({
    kind: 'answer',
    text,
    ...(delayMs === undefined ? {} : { delayMs }),
  }),
  contextLengthExceeded: (): MisbehavingReply => ({
    kind: 'error',
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
  }),
  toolsUnsupported: (): MisbehavingReply => ({
    kind: 'error',
    status: 400,
    type: 'invalid_request_error',
    message: 'registry.ollama.ai/library/tiny does not support tools',
  }),
  responseFormatUnsupported: (): MisbehavingReply => ({
    kind: 'error',
    status: 400,
    type: 'invalid_request_error',
    message: "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model.",
  }),
  cutToolCall: (name: string, args: string): MisbehavingReply => ({ kind: 'cut_tool_call', name, arguments: args }),
} as const;

/** One request the server received. */
export interface MisbehavingRequest {
  readonly scenario: string;
  readonly body: {
    readonly stream?: boolean;
    readonly tools?: unknown[];
    readonly response_format?: unknown;
    readonly messages: { role: string; content: string | null; tool_call_id?: string }[];
  };
}

export interface MisbehavingOpenAi {
  /** Registers a scenario's replies (replacing earlier ones) and returns its base URL. */
  script(scenario: string, replies: readonly MisbehavingReply[]): string;
  /** The requests of one scenario, in arrival order. */
  requestsOf(scenario: string): MisbehavingRequest[];
  stop(): Promise<void>;
}

const USAGE = { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 };

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** The reply as streamed chunks; a cut call splits its arguments and ends the body in the middle. */
function stream(res: ServerResponse, reply: Exclude<MisbehavingReply, { kind: 'error' }>, callNo: number): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (reply.kind === 'answer') {
    sse(res, chunk({ role: 'assistant', content: reply.text }));
    sse(res, chunk({}, 'stop'));
  } else {
    const half = Math.floor(reply.arguments.length / 2);
    const id = `call_${callNo}`;
    sse(
      res,
      chunk({
        role: 'assistant',
        tool_calls: [{ index: 0, id, type: 'function', function: { name: reply.name, arguments: '' } }],
      }),
    );
    sse(res, chunk({ tool_calls: [{ index: 0, function: { arguments: reply.arguments.slice(0, half) } }] }));
    if (reply.kind === 'cut_tool_call') return void res.end();
    sse(res, chunk({ tool_calls: [{ index: 0, function: { arguments: reply.arguments.slice(half) } }] }));
    sse(res, chunk({}, 'tool_calls'));
  }
  sse(res, { ...chunk({}), choices: [], usage: USAGE });
  res.end('data: [DONE]\n\n');
}

/** The reply as one JSON completion (a cut call: the body stops halfway through the JSON). */
function whole(res: ServerResponse, reply: Exclude<MisbehavingReply, { kind: 'error' }>, callNo: number): void {
  const message =
    reply.kind === 'answer'
      ? { role: 'assistant', content: reply.text }
      : {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: `call_${callNo}`, type: 'function', function: { name: reply.name, arguments: reply.arguments } },
          ],
        };
  const text = JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, message, finish_reason: reply.kind === 'answer' ? 'stop' : 'tool_calls' }],
    usage: USAGE,
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(reply.kind === 'cut_tool_call' ? text.slice(0, Math.floor(text.length / 2)) : text);
}

function respond(res: ServerResponse, reply: MisbehavingReply, streamed: boolean, callNo: number): void {
  if (reply.kind === 'error') {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    const error = {
      message: reply.message,
      type: reply.type ?? 'invalid_request_error',
      param: null,
      code: reply.code ?? null,
    };
    return void res.end(JSON.stringify({ error }));
  }
  if (streamed) stream(res, reply, callNo);
  else whole(res, reply, callNo);
}

/** Starts the server on 127.0.0.1 and an ephemeral port. */
export function startMisbehavingOpenAi(): Promise<MisbehavingOpenAi> {
  const scenarios = new Map<string, readonly MisbehavingReply[]>();
  const requests: MisbehavingRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const scenario = (req.url ?? '').split('/')[1] ?? '';
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as MisbehavingRequest['body'];
      const callNo = requests.filter((r) => r.scenario === scenario).length;
      requests.push({ scenario, body });
      const replies = scenarios.get(scenario) ?? [];
      const reply = replies[Math.min(callNo, replies.length - 1)];
      if (reply === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: `no scenario ${scenario}` } }));
      }
      const delayMs = 'delayMs' in reply ? (reply.delayMs ?? 0) : 0;
      // A slow first token: the headers go at once, the first chunk after the delay.
      if (delayMs > 0 && body.stream === true && reply.kind !== 'error') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
      }
      const timer = setTimeout(() => respond(res, reply, body.stream === true, callNo + 1), delayMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        script(scenario, replies) {
          scenarios.set(scenario, replies);
          return `${base}/${scenario}/v1`;
        },
        requestsOf: (scenario) => requests.filter((r) => r.scenario === scenario),
        stop: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

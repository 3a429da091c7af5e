import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions server on an ephemeral port, speaking the streaming
 * wire format well or badly: the first segment of the request path picks the
 * behaviour (`url('stall')` is `http://127.0.0.1:<port>/stall/v1`), so one
 * server serves every agent configuration of a test file.
 */

export const FAKE_OPENAI_BEHAVIOURS = {
  /** A tool call (`echo`) while no tool result is in the conversation, then an answer with usage. */
  toolThenAnswer: 'tool-then-answer',
  /** One content chunk, then only SSE keep-alive comments until the client goes. */
  stall: 'stall',
  /** One content chunk, then nothing at all until the client goes. */
  silence: 'silence',
  /** A content chunk every 50 ms, never finishing, until the client goes. */
  trickle: 'trickle',
  /** One content chunk, then the end of the body: no finish_reason, no `[DONE]`. */
  truncated: 'truncated',
  /** HTTP 200 with an HTML page instead of an event stream. */
  html: 'html',
  /** HTTP 500 with an error body (and `retry-after-ms: 1`, so the SDK's one retry comes at once). */
  serverError: 'server-error',
  /** An event stream whose first `data:` line is not JSON. */
  malformed: 'malformed',
  /** A content chunk, then `finish_reason: content_filter`: the provider withheld the rest. */
  contentFilter: 'content-filter',
  /** A content chunk, then `finish_reason: length`: the answer reached `max_tokens`. */
  maxTokens: 'max-tokens',
} as const;
export type FakeOpenAiBehaviour = (typeof FAKE_OPENAI_BEHAVIOURS)[keyof typeof FAKE_OPENAI_BEHAVIOURS];

/** One request the server received. */
export interface FakeOpenAiRequest {
  readonly behaviour: string;
  readonly body: Record<string, unknown>;
  /** The `Authorization` header (`Bearer <key>`). */
  readonly authorization: string | undefined;
  /** Resolves when the connection of the response closes (the server ended it, or the client went). */
  readonly closed: Promise<void>;
}

export interface FakeOpenAi {
  /** The base URL (`baseURL` of the SDK) of a behaviour. */
  url(behaviour: FakeOpenAiBehaviour): string;
  /** Every request, in arrival order. */
  readonly requests: FakeOpenAiRequest[];
  stop(): Promise<void>;
}

const PARTIAL = 'A partial ';

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function startEvents(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
}

function send(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** Calls `write` every `ms` until the connection closes. */
function every(res: ServerResponse, ms: number, write: () => void): void {
  const timer = setInterval(write, ms);
  res.on('close', () => clearInterval(timer));
}

function toolThenAnswer(res: ServerResponse, body: { messages: { role: string }[] }): void {
  startEvents(res);
  const answered = body.messages.some((m) => m.role === 'tool');
  const chunks = answered
    ? [
        chunk({ role: 'assistant', content: 'The echo ' }),
        chunk({ content: 'said hello.' }),
        chunk({}, 'stop'),
        { ...chunk({}), choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } },
      ]
    : [
        chunk({ role: 'assistant', content: 'Let me echo. ' }),
        chunk({
          tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'echo', arguments: '' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"hello"}' } }] }),
        chunk({}, 'tool_calls'),
      ];
  for (const c of chunks) send(res, c);
  res.end('data: [DONE]\n\n');
}

function respond(behaviour: string, res: ServerResponse, body: { messages: { role: string }[] }): void {
  switch (behaviour) {
    case FAKE_OPENAI_BEHAVIOURS.toolThenAnswer:
      return toolThenAnswer(res, body);
    case FAKE_OPENAI_BEHAVIOURS.stall:
      startEvents(res);
      send(res, chunk({ role: 'assistant', content: PARTIAL }));
      return every(res, 50, () => res.write(': keep-alive\n\n'));
    case FAKE_OPENAI_BEHAVIOURS.silence:
      startEvents(res);
      return send(res, chunk({ role: 'assistant', content: PARTIAL }));
    case FAKE_OPENAI_BEHAVIOURS.trickle:
      startEvents(res);
      return every(res, 50, () => send(res, chunk({ content: 'more ' })));
    case FAKE_OPENAI_BEHAVIOURS.truncated:
      startEvents(res);
      send(res, chunk({ role: 'assistant', content: PARTIAL }));
      return void res.end();
    case FAKE_OPENAI_BEHAVIOURS.html:
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<html>502 oops</html>');
    case FAKE_OPENAI_BEHAVIOURS.serverError:
      res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      return void res.end(JSON.stringify({ error: { message: 'internal error', type: 'server_error' } }));
    case FAKE_OPENAI_BEHAVIOURS.contentFilter:
    case FAKE_OPENAI_BEHAVIOURS.maxTokens:
      startEvents(res);
      send(res, chunk({ role: 'assistant', content: PARTIAL }));
      send(res, chunk({}, behaviour === FAKE_OPENAI_BEHAVIOURS.maxTokens ? 'length' : 'content_filter'));
      return void res.end('data: [DONE]\n\n');
    case FAKE_OPENAI_BEHAVIOURS.malformed:
      startEvents(res);
      return void res.end('data: {"id": "c1", "choices": [oops\n\n');
    default:
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no behaviour ${behaviour}` } }));
  }
}

/** Starts the server on 127.0.0.1 and an ephemeral port. */
export function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: FakeOpenAiRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const behaviour = (req.url ?? '').split('/')[1] ?? '';
    const closed = new Promise<void>((resolve) => res.on('close', resolve));
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as { messages: { role: string }[] };
      requests.push({ behaviour, body, authorization: req.headers.authorization, closed });
      respond(behaviour, res, body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        url: (behaviour) => `${base}/${behaviour}/v1`,
        requests,
        stop: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

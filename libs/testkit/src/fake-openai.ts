import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions server on an ephemeral port, speaking the streaming
 * wire format well or badly: the first segment of the request path picks the
 * behaviour (`url('stall')` is `http://127.0.0.1:<port>/stall/v1`), so one
 * server serves every agent configuration of a test file. Requests are kept
 * as sent (image and file content parts included); `POST <base>/files` is
 * OpenAI's file API (multipart `file` and `purpose`, answering `file-<n>`).
 */

/** The behaviours of the fake server, each the first path segment of its base URL. */
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
  /** Chats as `tool-then-answer`, but has no file API: `POST /v1/files` answers 404. */
  noFiles: 'no-files',
} as const;
/** One of {@link FAKE_OPENAI_BEHAVIOURS}. */
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

/** One file uploaded to `POST /v1/files` (multipart), as the server read it. */
export interface FakeOpenAiUpload {
  readonly behaviour: string;
  /** The id the server answered with (`file-<n>`). */
  readonly id: string;
  readonly purpose: string;
  readonly filename: string;
  /** The file part's content type. */
  readonly mime: string;
  readonly bytes: Buffer;
  /** The other form fields (`expires_after[seconds]`, …). */
  readonly fields: Readonly<Record<string, string>>;
}

/** A running fake server. */
export interface FakeOpenAi {
  /** The base URL (`baseURL` of the SDK) of a behaviour. */
  url(behaviour: FakeOpenAiBehaviour): string;
  /** Every chat-completions request, in arrival order. */
  readonly requests: FakeOpenAiRequest[];
  /** Every file uploaded, in arrival order (a refused upload is not one). */
  readonly uploads: FakeOpenAiUpload[];
  /** The behaviour of every `POST /v1/files`, refused ones included, in arrival order. */
  readonly fileRequests: string[];
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
    case FAKE_OPENAI_BEHAVIOURS.noFiles:
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

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Reads a multipart upload as OpenAI's file API does; undefined when it has no file or purpose. */
async function readUpload(
  req: IncomingMessage,
  raw: Buffer,
  behaviour: string,
  id: string,
): Promise<FakeOpenAiUpload | undefined> {
  const form = await new Response(raw, { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
  const file = form.get('file');
  const purpose = form.get('purpose');
  if (!(file instanceof File) || typeof purpose !== 'string') return undefined;
  const fields: Record<string, string> = {};
  for (const [name, value] of form.entries()) if (typeof value === 'string') fields[name] = value;
  const bytes = Buffer.from(await file.arrayBuffer());
  return { behaviour, id, purpose, filename: file.name, mime: file.type, bytes, fields };
}

/** `POST /v1/files`: stores the upload and answers a file object, or 404 for `no-files`, or 400 for a bad form. */
async function fileApi(
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
  behaviour: string,
  uploads: FakeOpenAiUpload[],
) {
  if (behaviour === FAKE_OPENAI_BEHAVIOURS.noFiles) {
    return sendJson(res, 404, { error: { message: 'Not Found', type: 'invalid_request_error' } });
  }
  const upload = await readUpload(req, raw, behaviour, `file-${uploads.length + 1}`);
  if (upload === undefined) return sendJson(res, 400, { error: { message: 'file and purpose are required' } });
  uploads.push(upload);
  sendJson(res, 200, {
    id: upload.id,
    object: 'file',
    bytes: upload.bytes.length,
    created_at: 1,
    filename: upload.filename,
    purpose: upload.purpose,
    status: 'processed',
  });
}

/** Starts the server on 127.0.0.1 and an ephemeral port. */
export function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: FakeOpenAiRequest[] = [];
  const uploads: FakeOpenAiUpload[] = [];
  const fileRequests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const behaviour = (req.url ?? '').split('/')[1] ?? '';
    const closed = new Promise<void>((resolve) => res.on('close', resolve));
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (req.method === 'POST' && (req.url ?? '').endsWith('/v1/files')) {
        fileRequests.push(behaviour);
        return void fileApi(req, res, raw, behaviour, uploads).catch(() => sendJson(res, 500, { error: {} }));
      }
      const body = JSON.parse(raw.toString()) as { messages: { role: string }[] };
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
        uploads,
        fileRequests,
        stop: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

/**
 * A lean SSE reader for the event benchmark: one undici request per
 * subscription, blocks split on blank lines, frames and named events handed
 * to callbacks. It parses only what the benchmark measures.
 */
import { request } from 'undici';
import type { Dispatcher } from 'undici';

/** Callbacks of one subscription. */
export interface SseHandlers {
  /** A default message: its `data:` text. */
  readonly frame?: (data: string) => void;
  /** A named event (`replay.complete`, …). */
  readonly named?: (event: string, data: string) => void;
}

/** An open subscription. */
export interface SseConnection {
  /** Resolves when the server ends the stream or `close()` is called. */
  readonly done: Promise<void>;
  close(): void;
}

/** Opens `GET <url>` as an event stream; resolves once the response headers arrived. */
export async function openSse(
  url: string,
  headers: Record<string, string>,
  dispatcher: Dispatcher,
  handlers: SseHandlers,
): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await request(url, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...headers },
    dispatcher,
    signal: abort.signal,
  });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    throw new Error(`GET ${url} answered ${response.statusCode}: ${text}`);
  }
  response.body.setEncoding('utf8');
  const done = (async () => {
    let buffer = '';
    try {
      for await (const chunk of response.body as AsyncIterable<string>) {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          dispatch(buffer.slice(0, end), handlers);
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // Aborted or dropped: the subscription is over.
    }
  })();
  return { done, close: () => abort.abort() };
}

function dispatch(block: string, handlers: SseHandlers): void {
  if (block.startsWith(':')) return;
  let event: string | undefined;
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('data: ')) data = line.slice(6);
    else if (line.startsWith('event: ')) event = line.slice(7);
  }
  if (event === undefined) handlers.frame?.(data);
  else handlers.named?.(event, data);
}

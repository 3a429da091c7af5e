import { createArsError, errorFromResponse, isRetryableStatus, networkError } from './errors.ts';
import type { ArsError } from './errors.ts';
import { EVENTS_ROUTE } from './generated/contract.ts';
import type { EventFrame, EventType } from './generated/contract.ts';
import { createSseParser } from './sse-parser.ts';
import type { SseMessage } from './sse-parser.ts';

/** The events route (`events.subscribe`). */
export const EVENTS_PATH = EVENTS_ROUTE;

/** Reconnection after a dropped connection or a retryable refusal. */
export interface ReconnectOptions {
  /** First delay before reconnecting, in ms; a server `retry:` replaces it. @default 250 */
  readonly initialDelayMs?: number;
  /** Cap of the doubling delay, in ms. @default 5000 */
  readonly maxDelayMs?: number;
  /**
   * Jitter: each delay is shortened by a random fraction of up to this much of
   * itself, so that clients dropped together do not reconnect together. 0..1. @default 0.5
   */
  readonly jitter?: number;
  /**
   * Consecutive attempts that deliver nothing before the subscription gives
   * up and throws the last error. @default Infinity
   */
  readonly maxAttempts?: number;
}

/** Filters and behaviour of one subscription (`GET /v1/events`). */
export interface SubscribeOptions {
  /** Resume after this cursor (an event's `sequence`, the SSE `id:`). */
  readonly lastEventId?: string | number;
  /** Only events of this run (header `X-Service-Run`). */
  readonly run?: string;
  /** Only these event types (header `X-Service-Event-Type`, comma-joined). */
  readonly types?: readonly (EventType | (string & Record<never, never>))[];
  /** Cross-tenant fan-in (query `admin=1`); needs admin or console:fleet. */
  readonly admin?: boolean;
  /** Overrides the client's `X-Service-Session` for this subscription. */
  readonly session?: string;
  /** Extra request headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Ends the iteration (quietly: the loop just finishes). */
  readonly signal?: AbortSignal;
  /**
   * Also yield named stream events that are not event frames (for example
   * `replay.complete`) as {@link StreamControlEvent} items. @default false
   */
  readonly includeControlEvents?: boolean;
  /** Reconnection policy; `false` ends the iteration on the first drop. */
  readonly reconnect?: ReconnectOptions | false;
}

/** A named SSE event of the stream itself, not an event frame (`replay.complete`, …). */
export interface StreamControlEvent {
  /** The SSE `event:` name. */
  readonly control: string;
  /** The `data:` parsed as JSON when it is JSON, else the raw text. */
  readonly data: unknown;
}

/** True for the stream's own named events, false for event frames. */
export function isControlEvent(item: EventFrame | StreamControlEvent): item is StreamControlEvent {
  return typeof (item as Partial<StreamControlEvent>).control === 'string';
}

/** What the subscription needs from its client. */
export interface SubscriptionContext {
  readonly baseUrl: string;
  readonly headers: (session: string | undefined) => Record<string, string>;
}

/**
 * Opens a resumable subscription. Each iteration opens its own connection;
 * `break` or `return()` closes it at once, even while waiting for data.
 */
export function openSubscription(
  context: SubscriptionContext,
  options: SubscribeOptions = {},
): AsyncIterable<EventFrame | StreamControlEvent> {
  return {
    [Symbol.asyncIterator]() {
      const controller = new AbortController();
      const onAbort = () => controller.abort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) controller.abort();
      const generator = run(context, options, controller.signal);
      const done = () => options.signal?.removeEventListener('abort', onAbort);
      return {
        next: async () => {
          const result = await generator.next();
          if (result.done) done();
          return result;
        },
        return: async () => {
          controller.abort();
          done();
          return generator.return(undefined);
        },
        throw: async (error: unknown) => {
          controller.abort();
          done();
          return generator.throw(error);
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    },
  };
}

async function* run(
  context: SubscriptionContext,
  options: SubscribeOptions,
  signal: AbortSignal,
): AsyncGenerator<EventFrame | StreamControlEvent, void, undefined> {
  const reconnect = options.reconnect === false ? undefined : (options.reconnect ?? {});
  const url = eventsUrl(context.baseUrl, options);
  let cursor = options.lastEventId === undefined ? '' : String(options.lastEventId);
  // Frames at or before the cursor are never delivered twice, whatever the server replays.
  let lastSequence = /^\d+$/.test(cursor) ? Number(cursor) : -Infinity;
  let failures = 0;
  let serverRetryMs: number | undefined;
  let lastError: unknown;

  for (let attempt = 0; !signal.aborted; attempt++) {
    if (attempt > 0) {
      if (!reconnect) {
        if (lastError === undefined) return;
        throw lastError;
      }
      if (failures >= (reconnect.maxAttempts ?? Infinity)) throw lastError ?? dropped(url);
      await abortableDelay(backoffMs(reconnect, serverRetryMs, failures), signal);
      if (signal.aborted) return;
    }
    const response = await connect(url, headersFor(context, options, cursor), signal).catch((error: unknown) => error);
    if (signal.aborted) return;
    if (!(response instanceof Response)) {
      lastError = response;
      failures++;
      continue;
    }
    if (!response.ok) {
      lastError = await errorFromResponse(response);
      if (!isRetryableStatus(response.status)) throw lastError;
      failures++;
      continue;
    }
    const parser = createSseParser(cursor);
    let delivered = false;
    for await (const message of readMessages(response, parser)) {
      const item = classify(message, url);
      if (message.lastEventId !== '') cursor = message.lastEventId;
      if (isControlEvent(item)) {
        if (options.includeControlEvents) yield item;
        continue;
      }
      if (message.lastEventId === '') cursor = String(item.sequence);
      // A server that replays from before the cursor must not produce duplicates.
      if (item.sequence <= lastSequence) continue;
      lastSequence = item.sequence;
      delivered = true;
      yield item;
    }
    if (signal.aborted) return;
    serverRetryMs = parser.retryMs ?? serverRetryMs;
    failures = delivered ? 0 : failures + 1;
    lastError = reconnect ? dropped(url) : undefined;
  }
}

async function* readMessages(
  response: Response,
  parser: ReturnType<typeof createSseParser>,
): AsyncGenerator<SseMessage, void, undefined> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
  } catch {
    // A read error is a dropped connection (or our own abort): it ends this attempt; the caller decides.
  } finally {
    reader.cancel().catch(() => {});
  }
}

function classify(message: SseMessage, url: string): EventFrame | StreamControlEvent {
  const named = message.event !== '' && message.event !== 'message';
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch (error) {
    if (named) return { control: message.event, data: message.data };
    throw createArsError(200, 'invalid_response', `${url} sent a frame whose data is not JSON`, { cause: error });
  }
  if (isFrame(data) && (!named || message.event === data.type)) return data;
  if (named) return { control: message.event, data };
  throw createArsError(200, 'invalid_response', `${url} sent a frame without type and sequence`);
}

function isFrame(value: unknown): value is EventFrame {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['type'] === 'string' && typeof record['sequence'] === 'number';
}

function eventsUrl(baseUrl: string, options: SubscribeOptions): string {
  return baseUrl + EVENTS_PATH + (options.admin ? '?admin=1' : '');
}

function headersFor(context: SubscriptionContext, options: SubscribeOptions, cursor: string): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'text/event-stream',
    'cache-control': 'no-cache',
    ...context.headers(options.session),
    ...options.headers,
  };
  if (options.run) headers['x-service-run'] = options.run;
  if (options.types && options.types.length > 0) headers['x-service-event-type'] = options.types.join(',');
  if (cursor !== '') headers['last-event-id'] = cursor;
  return headers;
}

async function connect(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  try {
    return await fetch(url, { method: 'GET', headers, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw networkError(url, error);
  }
}

/** Exponential backoff with jitter: `min(max, initial·2^(failures-1))`, shortened by up to `jitter` of itself. */
export function backoffMs(reconnect: ReconnectOptions, serverRetryMs: number | undefined, failures: number): number {
  const initial = serverRetryMs ?? reconnect.initialDelayMs ?? 250;
  const max = reconnect.maxDelayMs ?? 5000;
  const jitter = Math.min(1, Math.max(0, reconnect.jitter ?? 0.5));
  return Math.min(max, initial * 2 ** Math.max(0, failures - 1)) * (1 - jitter * Math.random());
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    signal.addEventListener('abort', finish, { once: true });
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
  });
}

function dropped(url: string): ArsError {
  return createArsError(0, 'unavailable', `${url}: the event stream closed`);
}

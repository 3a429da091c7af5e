import { getMethod } from '@ars/contracts';
import type { EventFrame } from '@ars/contracts';
import { ArsError } from './errors.ts';
import { authHeaders, normalizeBaseUrl, postJson } from './http.ts';
import { openSubscription } from './subscribe.ts';
import type { StreamControlEvent, SubscribeOptions } from './subscribe.ts';

/** How a client reaches the service and who it is. */
export interface ClientOptions {
  /** The gateway's base address, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** The connection token (`Authorization: Bearer`); omitted when empty. */
  readonly token?: string;
  /** Default `X-Service-Session`; replaces the token's `session` claim. */
  readonly session?: string;
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Per-call options of {@link ArsClient.call}. */
export interface CallOptions {
  /** Overrides the client's `X-Service-Session` for this call. */
  readonly session?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** The typed SDK over the gateway's HTTP/JSON and SSE surface. */
export interface ArsClient {
  readonly baseUrl: string;
  /**
   * Calls a registry method by its dotted name on its canonical route.
   * `body` defaults to `{ identity: {} }` (backfilled by the gateway).
   * Throws ArsError: `unknown_method` (locally) for a name outside the
   * registry, the server's `{code, message}` for any non-2xx.
   */
  call<T = unknown>(method: string, body?: unknown, options?: CallOptions): Promise<T>;
  /**
   * Subscribes to `GET /v1/events`; resumes with `Last-Event-ID` after a
   * dropped connection. Yields only event frames unless `includeControlEvents`.
   */
  subscribe(
    options: SubscribeOptions & { readonly includeControlEvents: true },
  ): AsyncIterable<EventFrame | StreamControlEvent>;
  subscribe(options?: SubscribeOptions): AsyncIterable<EventFrame>;
}

/** Creates a client: calls over `node:http(s)` on Node.js, else the global `fetch`; the event stream over `fetch`. No other dependency. */
export function createClient(options: ClientOptions): ArsClient {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const headers = (session: string | undefined): Record<string, string> => ({
    ...options.headers,
    ...authHeaders(options.token, session ?? options.session),
  });

  async function call<T>(method: string, body: unknown = { identity: {} }, callOptions: CallOptions = {}): Promise<T> {
    const def = getMethod(method);
    const route = def?.routes[0];
    if (!def || route === undefined) {
      throw new ArsError(404, 'unknown_method', `${method} is not a method of the registry`);
    }
    if (def.httpMethod !== 'POST') {
      throw new ArsError(405, 'method_not_allowed', `${method} is not called with call(): use subscribe()`);
    }
    const requestHeaders = { ...headers(callOptions.session), ...callOptions.headers };
    return (await postJson(baseUrl + route, body, requestHeaders, callOptions.signal)) as T;
  }

  function subscribe(subscribeOptions?: SubscribeOptions): AsyncIterable<EventFrame | StreamControlEvent> {
    return openSubscription({ baseUrl, headers }, subscribeOptions);
  }

  return { baseUrl, call, subscribe } as ArsClient;
}

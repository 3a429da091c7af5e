import { createArsError } from './errors.ts';
import { METHOD_ROUTES } from './generated/contract.ts';
import type { EventFrame, MethodName, MethodTypes, StartRequest, StartResponse } from './generated/contract.ts';
import { authHeaders, normalizeBaseUrl, postJson } from './http.ts';
import { openSubscription } from './subscribe.ts';
import type { ReconnectOptions, StreamControlEvent, SubscribeOptions } from './subscribe.ts';
import type { PostTransport } from './transport-fetch.ts';

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
  /** How JSON calls are sent. @default node:http on Node.js, else the global fetch */
  readonly transport?: PostTransport;
}

/** Per-call options. */
export interface CallOptions {
  /** Overrides the client's `X-Service-Session` for this call. */
  readonly session?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Abandons the call: it rejects with the signal's reason (an `AbortError` when none was given). */
  readonly signal?: AbortSignal;
}

/** The request body of a method (`identity` may be omitted: the client sends `{}`, the gateway fills it in). */
export type MethodRequest<M extends MethodName> = MethodTypes[M]['request'];
/** The response of a method: z.output of its response schema in the contracts. */
export type MethodResponse<M extends MethodName> = MethodTypes[M]['response'];

/** One method as a function; the request may be omitted when none of its members is required. */
export type MethodFunction<M extends MethodName> =
  Record<never, never> extends MethodRequest<M>
    ? (request?: MethodRequest<M>, options?: CallOptions) => Promise<MethodResponse<M>>
    : (request: MethodRequest<M>, options?: CallOptions) => Promise<MethodResponse<M>>;

type Head<S extends string> = S extends `${infer H}.${string}` ? H : S;
type KeysUnder<P extends string> = MethodName extends infer K ? (K extends `${P}${infer R}` ? Head<R> : never) : never;
/** A dotted name: its function when it is a method, its namespace when longer names start with it, or both (`pause`, `pause.list`). */
type Member<F extends string> = (F extends MethodName ? MethodFunction<F> : unknown) &
  ([Extract<MethodName, `${F}.${string}`>] extends [never] ? unknown : MethodNamespace<`${F}.`>);

/** The methods under a dotted prefix, as nested objects: `flows.runs.list` is `client.flows.runs.list`. */
export type MethodNamespace<P extends string = ''> = { readonly [H in KeysUnder<P>]: Member<`${P}${H}`> };

/** The event stream (`events.subscribe`); with `includeControlEvents`, also the stream's own named events. */
export interface Subscribe {
  (options: SubscribeOptions & { readonly includeControlEvents: true }): AsyncIterable<EventFrame | StreamControlEvent>;
  (options?: SubscribeOptions): AsyncIterable<EventFrame>;
}

/** The terminal event types of a run: exactly one of them ends every run. */
export const TERMINAL_EVENT_TYPES = ['task.completed', 'task.failed', 'task.cancelled'] as const;
export type TerminalEventType = (typeof TERMINAL_EVENT_TYPES)[number];

/** Options of {@link ArsClient.runUntilDone}. */
export interface RunUntilDoneOptions {
  /** Every event of the run, in order, the terminal one included. */
  readonly onEvent?: (frame: EventFrame) => void;
  /** Stops following (the promise rejects with the signal's reason); the run itself goes on. */
  readonly signal?: AbortSignal;
  /** Overrides the client's `X-Service-Session`. */
  readonly session?: string;
  /** Reconnection of the event stream. */
  readonly reconnect?: ReconnectOptions;
}

/** How a run ended. */
export interface RunOutcome {
  readonly taskId: string;
  /** From the terminal event's type. */
  readonly status: 'completed' | 'failed' | 'cancelled';
  /** The terminal event frame (its payload carries the answer or the error). */
  readonly terminal: EventFrame & { readonly type: TerminalEventType };
  /** True when `idempotency_key` matched an existing task. */
  readonly reused: boolean;
}

/** The client's own members, besides the method namespaces. */
export interface ClientCore {
  readonly baseUrl: string;
  /**
   * Calls a registry method by its dotted name on its canonical route; typed
   * for a known name. `body` defaults to `{ identity: {} }` and is sent as
   * given otherwise. Throws an ArsError: `unknown_method` (locally) for a
   * name outside the registry, the server's `{code, message}` for any non-2xx.
   */
  call<M extends MethodName>(method: M, body?: MethodRequest<M>, options?: CallOptions): Promise<MethodResponse<M>>;
  call<T = unknown>(method: string, body?: unknown, options?: CallOptions): Promise<T>;
  /**
   * Subscribes to `GET /v1/events`: reconnects with exponential backoff and
   * jitter, resumes with `Last-Event-ID`, never yields a sequence twice.
   * Yields only event frames unless `includeControlEvents`. Ends quietly when
   * `signal` aborts or the loop breaks.
   */
  readonly subscribe: Subscribe;
  /**
   * Starts a run and follows its events to the terminal one, which it
   * resolves with. Events are read from a cursor taken before the start, so
   * none is missed.
   */
  runUntilDone(request: StartRequest, options?: RunUntilDoneOptions): Promise<RunOutcome>;
}

/**
 * The typed SDK over the gateway's HTTP/JSON and SSE surface: every method of
 * the registry as `client.<family>.<name>(request)` (e.g. `client.tasks.get`,
 * `client.flows.runs.list`, `client.start`), `client.events.subscribe`, and
 * the raw `call`.
 */
export type ArsClient = ClientCore &
  Omit<MethodNamespace, keyof ClientCore | 'events'> & {
    readonly events: MethodNamespace<'events.'> & { readonly subscribe: Subscribe };
  };

/** Every dotted prefix of a method name (`flows`, `flows.runs`, …), for the runtime namespaces. */
const PREFIXES: ReadonlySet<string> = new Set(
  Object.keys(METHOD_ROUTES).flatMap((name) => {
    const parts = name.split('.');
    return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);
const SUBSCRIBE_METHOD = 'events.subscribe';

/** The `createClient` of a runtime: its default transport for JSON calls. */
export function createClientWith(defaultTransport: PostTransport): (options: ClientOptions) => ArsClient {
  return (options) => createClientOver(options, options.transport ?? defaultTransport);
}

function createClientOver(options: ClientOptions, transport: PostTransport): ArsClient {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const headers = (session: string | undefined): Record<string, string> => ({
    ...options.headers,
    ...authHeaders(options.token, session ?? options.session),
  });

  async function call(
    method: string,
    body: unknown = { identity: {} },
    callOptions: CallOptions = {},
  ): Promise<unknown> {
    const route = Object.hasOwn(METHOD_ROUTES, method) ? METHOD_ROUTES[method as MethodName] : undefined;
    if (route === undefined) {
      if (method === SUBSCRIBE_METHOD) {
        throw createArsError(405, 'method_not_allowed', `${method} is not called with call(): use subscribe()`);
      }
      throw createArsError(404, 'unknown_method', `${method} is not a method of the registry`);
    }
    const requestHeaders = { ...headers(callOptions.session), ...callOptions.headers };
    return postJson(baseUrl + route, body, requestHeaders, callOptions.signal, transport);
  }

  /** A typed method call: the body gets `identity: {}` when it has none. */
  function invoke(method: string, request?: unknown, callOptions?: CallOptions): Promise<unknown> {
    const body =
      typeof request === 'object' && request !== null && !Array.isArray(request) && !('identity' in request)
        ? { identity: {}, ...request }
        : (request ?? { identity: {} });
    return call(method, body, callOptions);
  }

  const subscribe = ((subscribeOptions?: SubscribeOptions) =>
    openSubscription({ baseUrl, headers }, subscribeOptions)) as Subscribe;

  async function runUntilDone(request: StartRequest, runOptions: RunUntilDoneOptions = {}): Promise<RunOutcome> {
    const { signal, session } = runOptions;
    const callOptions = { ...(session === undefined ? {} : { session }), ...(signal ? { signal } : {}) };
    // The stream's sequence now: every event of the run comes after it.
    const { sequence } = (await invoke('tasks.list', { limit: 1 }, callOptions)) as MethodResponse<'tasks.list'>;
    const started = (await invoke('start', request, callOptions)) as StartResponse;
    const frames = subscribe({
      run: started.task_id,
      // A reused task may have run before the cursor: read its events from the start of the stream.
      lastEventId: started.reused ? 0 : sequence,
      ...callOptions,
      ...(runOptions.reconnect ? { reconnect: runOptions.reconnect } : {}),
    });
    for await (const frame of frames) {
      runOptions.onEvent?.(frame);
      if (isTerminalFrame(frame)) {
        const status = frame.type.slice('task.'.length) as RunOutcome['status'];
        return { taskId: started.task_id, status, terminal: frame, reused: started.reused };
      }
    }
    signal?.throwIfAborted();
    throw createArsError(0, 'unavailable', `the event stream of ${started.task_id} ended before its terminal event`);
  }

  const core: ClientCore = { baseUrl, call: call as ClientCore['call'], subscribe, runUntilDone };
  const namespaces = new Map<string, unknown>();

  /** The runtime namespace of a dotted prefix: callable when it is also a method (`pause` and `pause.list`). */
  function namespace(path: string): unknown {
    let proxy = namespaces.get(path);
    if (proxy === undefined) {
      const isMethod = Object.hasOwn(METHOD_ROUTES, path);
      const target = isMethod
        ? (request?: unknown, callOptions?: CallOptions) => invoke(path, request, callOptions)
        : Object.create(null);
      proxy = new Proxy(target, {
        get: (_target, property) => (typeof property === 'string' ? member(`${path}.${property}`) : undefined),
        has: (_target, property) => typeof property === 'string' && member(`${path}.${property}`) !== undefined,
      });
      namespaces.set(path, proxy);
    }
    return proxy;
  }

  function member(path: string): unknown {
    if (path === SUBSCRIBE_METHOD) return subscribe;
    if (PREFIXES.has(path)) return namespace(path);
    if (Object.hasOwn(METHOD_ROUTES, path)) return namespace(path);
    return undefined;
  }

  return new Proxy(core, {
    get: (target, property, receiver) => {
      if (typeof property !== 'string' || Object.hasOwn(target, property)) {
        return Reflect.get(target, property, receiver);
      }
      return member(property);
    },
    has: (target, property) =>
      Reflect.has(target, property) || (typeof property === 'string' && member(property) !== undefined),
  }) as unknown as ArsClient;
}

function isTerminalFrame(frame: EventFrame): frame is EventFrame & { readonly type: TerminalEventType } {
  return (TERMINAL_EVENT_TYPES as readonly string[]).includes(frame.type);
}

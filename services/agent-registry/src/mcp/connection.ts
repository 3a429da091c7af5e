import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { IdentityQuad, McpCallToolReply, McpConnection } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { callReply, classifyCallFailure } from './call-outcome.ts';
import { discover, DiscoveryCache, listPrompts, listResources, listTools } from './discovery.ts';
import { withDeadline } from './deadline.ts';
import { unnamedTools } from './naming.ts';
import { openClient } from './transport.ts';
import type { OpenedClient } from './transport.ts';
import { ResourceSubscriptions } from './subscriptions.ts';
import type {
  CallEntry,
  ConnectionHealth,
  ConnectionHooks,
  ConnectionSettings,
  ConnectionState,
  LifecycleEvent,
  ToolCall,
} from './connection-types.ts';

/**
 * One live MCP connection: opened lazily, shared by every run of the agent
 * revision on this replica, supervised (a connection that breaks is
 * `failed`, then reopened with exponential backoff; calls meanwhile are
 * refused `server_unavailable` at once), with its discovery cached and kept
 * fresh by `list_changed` notifications. Nothing here is shared with another
 * connection: a hung server holds only its own calls.
 */

const now = () => new Date().toISOString();

function unavailable(serverId: string, detail: string) {
  return refuse(MCP_CALL_TOOL, 'server_unavailable', `MCP server ${serverId} is not connected: ${detail}`);
}

function isParseFailure(error: Error): boolean {
  return /ZodError$/.test(error.name) || error instanceof SyntaxError;
}

/** An HTTP 401: the server wants a token the connection does not carry (or one it refused). */
function isUnauthorized(error: unknown): boolean {
  return (error instanceof StreamableHTTPError || error instanceof SseError) && error.code === 401;
}

/** One server's connection (see the module comment); the pool creates it, its first use opens it. */
export class ServerConnection {
  readonly #settings: ConnectionSettings;
  readonly #hooks: ConnectionHooks;
  readonly #log: Logger;
  /** An OAuth-bound server's grant: the transport sends its access token. */
  readonly #authProvider: OAuthClientProvider | undefined;
  /** The last attempt to open failed with HTTP 401. */
  #unauthorized = false;
  #state: ConnectionState = 'pending';
  #opened: OpenedClient | undefined;
  #opening: Promise<OpenedClient> | undefined;
  /** The client of the current or coming session: notifications of any other are stale. */
  #client: Client | undefined;
  readonly #discovery = new DiscoveryCache();
  #everConnected = false;
  #connectedAt: number | undefined;
  #failures = 0;
  #restarts = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #lastError: { message: string; at: string } | undefined;
  #lastUsed = Date.now();
  readonly #inFlight = new Set<CallEntry>();
  readonly #counters = { total: 0, refused: 0, tool_errors: 0 };
  readonly #subscriptions = new ResourceSubscriptions();
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;

  readonly key: string;
  readonly spec: McpConnection;

  constructor(
    key: string,
    spec: McpConnection,
    settings: ConnectionSettings,
    hooks: ConnectionHooks,
    logger: Logger,
    authProvider?: OAuthClientProvider,
  ) {
    this.key = key;
    this.spec = spec;
    this.#settings = settings;
    this.#hooks = hooks;
    this.#log = logger;
    this.#authProvider = authProvider;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get serverId(): string {
    return this.spec.server_id;
  }

  /** Whether the last attempt to open was answered HTTP 401 (an OAuth-bound server reached without a grant). */
  get unauthorized(): boolean {
    return this.#unauthorized;
  }

  /** The cached discovery (empty lists before the first one). */
  get tools(): readonly Tool[] {
    return this.#discovery.tools;
  }

  get prompts(): readonly Prompt[] {
    return this.#discovery.prompts;
  }

  get resources(): readonly Resource[] {
    return this.#discovery.resources;
  }

  get discoveredAt(): string | undefined {
    return this.#discovery.at;
  }

  /** Milliseconds since the last use; 0 while a call is in flight or the connection is opening. */
  idleMs(at = Date.now()): number {
    if (this.#inFlight.size > 0 || this.#opening !== undefined) return 0;
    return at - this.#lastUsed;
  }

  health(): ConnectionHealth {
    return {
      state: this.#state,
      transport: this.#opened?.transport ?? this.spec.transport,
      ...(this.#lastError === undefined
        ? {}
        : { last_error: this.#lastError.message, last_error_at: this.#lastError.at }),
      ...(this.#discovery.at === undefined ? {} : { last_discovery_at: this.#discovery.at }),
      ...(this.#connectedAt === undefined ? {} : { connected_at: new Date(this.#connectedAt).toISOString() }),
      restarts: this.#restarts,
      calls: { ...this.#counters, in_flight: this.#inFlight.size },
    };
  }

  /**
   * The connected client. Opens the connection on first use (waiting for
   * it); a `failed` or `restarting` connection is refused at once
   * (`server_unavailable`) unless `force` (a probe), which reopens it now.
   */
  async ready(options: { readonly force?: boolean } = {}): Promise<OpenedClient> {
    this.#lastUsed = Date.now();
    if (this.#state === 'closed') throw unavailable(this.serverId, 'the connection is closed');
    if (this.#state === 'connected' && this.#opened !== undefined) return this.#opened;
    if (this.#state === 'pending' || options.force === true) return this.#open();
    throw unavailable(this.serverId, `${this.#state}; last error: ${this.#lastError?.message ?? 'none'}`);
  }

  /** One tool call; refusals are `_mcp.call_tool`'s. */
  async callTool(call: ToolCall): Promise<McpCallToolReply> {
    const started = Date.now();
    this.#counters.total += 1;
    this.#inFlight.add(call.entry);
    try {
      const opened = await this.#readyWithin(call.timeoutMs, call.entry.controller.signal);
      if (!this.#discovery.tools.some((t) => t.name === call.tool)) {
        throw refuse(MCP_CALL_TOOL, 'unknown_tool', `MCP server ${this.serverId} lists no tool ${call.tool}`);
      }
      const remaining = call.timeoutMs - (Date.now() - started);
      if (remaining <= 0) throw refuse(MCP_CALL_TOOL, 'call_timeout', `${this.serverId}/${call.tool}: no time left`);
      const sent = performance.now();
      const result = await opened.client.callTool({ name: call.tool, arguments: call.arguments }, undefined, {
        signal: call.entry.controller.signal,
        timeout: remaining,
      });
      const serverMs = performance.now() - sent;
      const where = { serverId: this.serverId, tool: call.tool };
      const reply = callReply(where, result as Record<string, unknown>, serverMs, this.#settings.resultMaxBytes());
      if (reply.is_error) this.#counters.tool_errors += 1;
      return reply;
    } catch (error) {
      this.#counters.refused += 1;
      const failure = classifyCallFailure(error, {
        serverId: this.serverId,
        tool: call.tool,
        aborted: call.entry.aborted,
      });
      if (failure.broken) this.#broken(this.#opened, `call failed: ${(error as Error).message}`);
      throw failure.error;
    } finally {
      this.#inFlight.delete(call.entry);
      this.#lastUsed = Date.now();
    }
  }

  /** Round-trip time of an MCP `ping`, in ms. */
  async ping(timeoutMs: number): Promise<number> {
    const opened = await this.ready();
    const sent = performance.now();
    await opened.client.ping({ timeout: timeoutMs });
    return performance.now() - sent;
  }

  /** Lists tools, prompts and resources again (a probe forces a reopen of a broken connection). */
  async refresh(options: { readonly force?: boolean } = {}): Promise<void> {
    const opened = await this.ready(options);
    if (options.force === true && opened !== this.#opened) return; // just opened: discovery is fresh
    await this.#discover(opened.client);
  }

  /**
   * Reads a resource. With a `subscriber`, and when the server supports
   * subscriptions, the host subscribes to it (once per resource) and
   * publishes `mcp.resource_updated` to each subscriber when it changes,
   * for as long as the connection lives (resubscribed after a reopen).
   */
  async readResource(uri: string, subscriber: IdentityQuad | undefined, timeoutMs: number) {
    const opened = await this.ready();
    const result = await opened.client.readResource({ uri }, { timeout: timeoutMs });
    const subscribable = opened.client.getServerCapabilities()?.resources?.subscribe === true;
    if (subscriber !== undefined && subscribable && this.#subscriptions.add(uri, subscriber)) {
      await opened.client.subscribeResource({ uri }, { timeout: timeoutMs });
    }
    return result;
  }

  /** Aborts every call in flight, closes the session and kills a stdio server with its children. */
  async close(): Promise<void> {
    this.#state = 'closed';
    clearTimeout(this.#restartTimer);
    const opening = this.#opening;
    const opened = this.#opened;
    this.#opened = undefined;
    this.#client = undefined;
    await opened?.close().catch((error: unknown) => this.#log.debug({ err: error }, 'mcp close failed'));
    if (opening !== undefined) {
      await opening.then((late) => late.close()).catch(() => undefined);
    }
  }

  /** `ready()`, waiting at most `ms` for a first open, and not past a cancel. */
  async #readyWithin(ms: number, signal: AbortSignal): Promise<OpenedClient> {
    if (this.#state === 'connected' && this.#opened !== undefined) return this.#opened;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(this.serverId, `still connecting after ${ms} ms`)), ms);
      signal.addEventListener('abort', () => reject(new Error('cancelled while connecting')), { once: true });
    });
    limit.catch(() => undefined); // a cancel after the connection came must not surface as unhandled
    try {
      return await Promise.race([this.ready(), limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  #open(): Promise<OpenedClient> {
    if (this.#opening !== undefined) return this.#opening;
    clearTimeout(this.#restartTimer);
    const reopening = this.#everConnected || this.#failures > 0;
    this.#state = reopening ? 'restarting' : 'pending';
    if (!reopening) this.#hooks.onLifecycle('pending', 'pending', '');
    const opening = this.#connect().then(
      (opened) => this.#connected(opened, reopening),
      (error: unknown) => {
        this.#failures += 1;
        this.#unauthorized = isUnauthorized(error);
        this.#fail(error instanceof Error ? error.message : String(error), reopening ? 'reattach_failed' : 'failed');
        throw unavailable(this.serverId, this.#lastError?.message ?? 'could not connect');
      },
    );
    this.#opening = opening.finally(() => {
      if (this.#opening === guarded) this.#opening = undefined;
    });
    const guarded = this.#opening;
    // The caller may be gone (a background restart): the rejection is recorded in the state.
    guarded.catch(() => undefined);
    return guarded;
  }

  async #connect(): Promise<OpenedClient> {
    const deadline = Date.now() + this.#settings.connectTimeoutMs;
    const attempt = openClient(this.spec, {
      timeoutMs: this.#settings.connectTimeoutMs,
      stdioMaxMessageBytes: this.#settings.stdioMaxMessageBytes,
      logger: this.#log,
      prepare: (client) => this.#wire(client),
      ...(this.#authProvider === undefined ? {} : { authProvider: this.#authProvider }),
    });
    const opened = await withDeadline(attempt, this.#settings.connectTimeoutMs, 'connect');
    try {
      await withDeadline(this.#discover(opened.client), Math.max(1, deadline - Date.now()), 'discovery');
    } catch (error) {
      await opened.close().catch(() => undefined);
      throw error;
    }
    return opened;
  }

  #connected(opened: OpenedClient, reopening: boolean): OpenedClient {
    if (this.#state === 'closed') {
      void opened.close().catch(() => undefined);
      throw unavailable(this.serverId, 'the connection is closed');
    }
    this.#opened = opened;
    this.#state = 'connected';
    this.#everConnected = true;
    this.#unauthorized = false;
    this.#connectedAt = Date.now();
    if (reopening) {
      this.#restarts += 1;
      this.#hooks.onLifecycle('reattached', 'connected', '');
      for (const uri of this.#subscriptions.uris()) {
        opened.client
          .subscribeResource({ uri }, { timeout: this.#settings.connectTimeoutMs })
          .catch((error: unknown) =>
            this.#log.warn({ err: error, server_id: this.serverId, uri }, 'mcp resubscribe failed'),
          );
      }
    }
    const tools = this.#discovery.tools.length;
    this.#log.info({ server_id: this.serverId, transport: opened.transport, tools }, 'mcp server connected');
    return opened;
  }

  /** Handlers on a new client, before it connects. */
  #wire(client: Client): void {
    this.#client = client;
    client.onclose = () => {
      if (this.#opened?.client === client) this.#broken(this.#opened, 'the connection closed');
    };
    client.onerror = (error) => {
      if (this.#client !== client) return;
      if (isParseFailure(error)) this.#protocolViolation(client, error);
      else this.#log.debug({ err: error, server_id: this.serverId }, 'mcp transport error');
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#refreshTools(client));
    client.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
      const generation = this.#discovery.next();
      this.#discovery.setPrompts(generation, await listPrompts(client, this.#settings.connectTimeoutMs));
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
      const generation = this.#discovery.next();
      this.#discovery.setResources(generation, await listResources(client, this.#settings.connectTimeoutMs));
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      const subscribers = this.#subscriptions.of(notification.params.uri);
      if (subscribers.length > 0) this.#hooks.onResourceUpdated(notification.params.uri, subscribers);
    });
  }

  async #discover(client: Client): Promise<void> {
    const generation = this.#discovery.next();
    const found = await discover(client, this.#settings.connectTimeoutMs);
    this.#discovery.setAll(generation, found);
    this.#warnUnnamed(found.tools);
  }

  /** `notifications/tools/list_changed`: one refresh at a time, another after it if more came meanwhile. */
  #refreshTools(client: Client): void {
    if (this.#refreshing !== undefined) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        const generation = this.#discovery.next();
        const tools = await listTools(client, this.#settings.connectTimeoutMs);
        if (this.#client !== client) return;
        this.#discovery.setTools(generation, tools);
        this.#warnUnnamed(tools);
      } while (this.#refreshAgain);
    })()
      .catch((error: unknown) => this.#log.warn({ err: error, server_id: this.serverId }, 'mcp tools refresh failed'))
      .finally(() => {
        this.#refreshing = undefined;
      });
  }

  #warnUnnamed(tools: readonly Tool[]): void {
    const unnamed = unnamedTools(this.serverId, tools);
    if (unnamed.length === 0) return;
    const message = 'mcp tools left out of the catalogue: exposed name over 64 characters or outside [A-Za-z0-9_-]';
    this.#log.warn({ server_id: this.serverId, tools: unnamed }, message);
  }

  /** A message that is not JSON-RPC: the calls in flight are refused `protocol_error` and the connection reopened. */
  #protocolViolation(client: Client, error: Error): void {
    this.#log.warn({ err: error, server_id: this.serverId }, 'mcp server wrote a message that is not JSON-RPC');
    for (const entry of this.#inFlight) {
      entry.aborted ??= 'protocol_error';
      entry.controller.abort();
    }
    if (this.#opened?.client === client) this.#broken(this.#opened, `not JSON-RPC: ${error.message}`);
  }

  /** The open session broke: close it, mark `failed`, schedule a reopen. */
  #broken(opened: OpenedClient | undefined, reason: string): void {
    if (opened === undefined || this.#opened !== opened || this.#state === 'closed') return;
    this.#opened = undefined;
    const stderr = opened.stderrTail();
    // A connection that stayed up past the longest backoff starts the backoff over.
    const stable = this.#connectedAt !== undefined && Date.now() - this.#connectedAt > this.#settings.backoffMaxMs;
    this.#failures = stable ? 0 : this.#failures + 1;
    void opened.close().catch(() => undefined);
    // Only to the log: a server's stderr may hold what its arguments carried.
    if (stderr !== '')
      this.#log.warn({ server_id: this.serverId, stderr: stderr.slice(-512) }, 'mcp stdio server stderr');
    this.#fail(reason, 'failed');
  }

  #fail(message: string, event: LifecycleEvent): void {
    if (this.#state === 'closed') return;
    this.#state = 'failed';
    this.#lastError = { message, at: now() };
    this.#log.warn({ server_id: this.serverId, failures: this.#failures, reason: message }, 'mcp connection failed');
    this.#hooks.onLifecycle(event, 'failed', message);
    const delay = Math.min(
      this.#settings.backoffMs * 2 ** Math.max(0, this.#failures - 1),
      this.#settings.backoffMaxMs,
    );
    this.#restartTimer = setTimeout(() => {
      if (this.#state === 'failed') void this.#open().catch(() => undefined);
    }, delay);
    this.#restartTimer.unref();
  }
}

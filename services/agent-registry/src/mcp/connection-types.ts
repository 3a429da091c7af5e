import type { IdentityQuad } from '@ars/contracts';
import type { AbortCause } from './call-outcome.ts';

/** The vocabulary of a `ServerConnection` (`connection.ts`), shared with the pool and the tool host. */

/**
 * `pending`: opening for the first time; `connected`; `failed`: broken or
 * could not open, waiting for the next attempt; `restarting`: reopening;
 * `closed`: closed for good (idle or shutdown).
 */
export type ConnectionState = 'pending' | 'connected' | 'failed' | 'restarting' | 'closed';

/** What changes of a connection's life are told (to publish `mcp.connection.*`). */
export type LifecycleEvent = 'pending' | 'failed' | 'reattached' | 'reattach_failed';

/** Tunables of every connection (from the service config). */
export interface ConnectionSettings {
  readonly connectTimeoutMs: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly stdioMaxMessageBytes: number;
  /** The largest result forwarded, in bytes of JSON (read per call: it depends on the bus). */
  readonly resultMaxBytes: () => number;
}

/** Who hears about a connection. */
export interface ConnectionHooks {
  onLifecycle(event: LifecycleEvent, state: ConnectionState, reason: string): void;
  onResourceUpdated(uri: string, subscribers: readonly IdentityQuad[]): void;
}

/** A call in flight, as `_mcp.cancel_call` finds it. */
export interface CallEntry {
  readonly controller: AbortController;
  aborted?: AbortCause;
}

/** Counters and timestamps of a connection. */
export interface ConnectionHealth {
  readonly state: ConnectionState;
  /** The transport in use (`sse` after a streamable HTTP fallback); the configured one before the first open. */
  readonly transport: string;
  readonly last_error?: string;
  readonly last_error_at?: string;
  readonly last_discovery_at?: string;
  readonly connected_at?: string;
  /** Successful reopenings after a break. */
  readonly restarts: number;
  readonly calls: {
    readonly total: number;
    readonly refused: number;
    readonly tool_errors: number;
    readonly in_flight: number;
  };
}

/** One tool call. */
export interface ToolCall {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly entry: CallEntry;
}

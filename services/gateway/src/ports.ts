import type { VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';

/**
 * The gateway's collaborators, as narrow structural interfaces: `main.ts`
 * passes the real ones from `@ars/auth` and `@ars/bus`; tests pass fakes.
 */

/** The verified claims of a connection token (`TokenClaims` of `@ars/auth`). */
export interface VerifiedClaims {
  readonly tenant: string;
  readonly user: string;
  readonly session?: string;
  readonly scopes: readonly string[];
  /** The `kid` of the key that verified the token. */
  readonly kid?: string;
  readonly iss?: string;
  readonly sub?: string;
  /** Expiry, seconds since the epoch. */
  readonly exp?: number;
  /** The token's id, when its issuer sets one. */
  readonly jti?: string;
}

/** Verifies a bearer token; throws ServiceError `auth_rejected` on any failure. */
export interface TokenVerifier {
  verify(token: string): Promise<VerifiedClaims>;
}

/** Mints development tokens (the `DevIssuer` of `@ars/auth`); present only in dev mode. */
export interface DevTokenMinter {
  mint(request: {
    tenant: string;
    user: string;
    session?: string;
    scopes?: readonly string[];
    ttlSeconds?: number;
  }): Promise<string>;
}

/** A token minted for `auth.rotate_token` (`IssuedToken` of `@ars/auth`). */
export interface MintedToken {
  /** The compact JWS: a secret, revealed once, never logged. */
  readonly token: string;
  readonly jti: string;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
}

/**
 * Mints the replacement token of `auth.rotate_token`: the dev issuer in dev
 * mode, the configured rotation key in production (absent: rotation is 501).
 */
export interface TokenMinter {
  issue(request: {
    tenant: string;
    user: string;
    session?: string;
    scopes?: readonly string[];
    ttlSeconds?: number;
  }): Promise<MintedToken>;
}

/** A revocation as the `ars_revocations` KV bucket stores it (`RevocationEntry` of `@ars/auth`). */
export interface Revocation {
  readonly reason: string;
  readonly revoked_at: string;
  readonly expires_at: string;
  readonly tenant: string;
  readonly user: string;
  readonly rotation_id?: string;
  readonly replaced_by?: string;
}

/** The revoked tokens this replica knows of (see `RevocationList`). */
export interface RevocationCheck {
  /**
   * The revocation of any of `keys`, else `undefined`. Throws ServiceError
   * `unavailable` when it cannot tell (fails closed).
   */
  find(keys: readonly string[]): Promise<Revocation | undefined>;
  /** Records a revocation this replica made, before the bucket's watch delivers it. */
  add(keys: readonly string[], revocation: Revocation): void;
  /** Resolves true once the bucket's watch delivered every key; false after `timeoutMs` or without a watch. */
  awaitDelivered(keys: readonly string[], timeoutMs: number): Promise<boolean>;
  /** Calls `listener` once, when any of `keys` gets revoked; returns the unsubscribe. */
  onRevoked(keys: readonly string[], listener: () => void): () => void;
}

/** Where `_artifact.upload_begin` / `_artifact.download_begin` say bytes go or come from. */
export interface BlobLocation {
  readonly transport: string;
  readonly bucket: string;
  readonly object_name: string;
}

/** The object store as the gateway streams artifact bytes through it. */
export interface BlobTransfer {
  /**
   * Streams `data` into the entry; resolves with the stored size once the
   * entry is complete. An errored `data` stores nothing.
   */
  put(location: BlobLocation, data: ReadableStream<Uint8Array>): Promise<{ size: number }>;
  /** The entry's bytes as a stream, or null when there is no such entry. */
  get(location: BlobLocation): Promise<ReadableStream<Uint8Array> | null>;
}

/** Forwards a call to its owning service (the `RpcClient` of `@ars/bus`). */
export interface RpcCaller {
  call(
    service: string,
    method: string,
    identity: VerifiedIdentity,
    body: unknown,
    options?: { timeoutMs?: number },
  ): Promise<unknown>;
}

/** Publishes a registry event (the `EventPublisher` of `@ars/bus`). */
export interface EventSink {
  publish(event: {
    type: string;
    identity: { tenant: string; user: string; session: string; run?: string };
    payload: Record<string, unknown>;
  }): Promise<unknown>;
}

/** One endpoint of a service instance as `$SRV.INFO` reports it. */
export interface DiscoveredEndpoint {
  readonly name: string;
  readonly subject: string;
  readonly queue_group?: string;
  readonly metadata?: Readonly<Record<string, string>> | null;
}

/** One live service instance as `$SRV.INFO` reports it. */
export interface DiscoveredInstance {
  readonly name: string;
  readonly id: string;
  readonly version: string;
  readonly description?: string;
  readonly metadata?: Readonly<Record<string, string>> | null;
  readonly endpoints: readonly DiscoveredEndpoint[];
}

/** One endpoint's counters as `$SRV.STATS` reports them (times in nanoseconds). */
export interface EndpointStats {
  readonly name: string;
  readonly subject: string;
  readonly num_requests: number;
  readonly num_errors: number;
  readonly last_error?: string;
  readonly processing_time: number;
  readonly average_processing_time: number;
}

/** One live service instance as `$SRV.STATS` reports it. */
export interface InstanceStats {
  readonly name: string;
  readonly id: string;
  readonly version: string;
  readonly started: string;
  readonly endpoints: readonly EndpointStats[];
}

/** What a service's `_health` endpoint answers (service-kit's `HealthReport`). */
export interface ServiceHealthReport {
  readonly service: string;
  readonly instance_id: string;
  readonly version: string;
  readonly status: 'ok' | 'degraded';
  readonly checks: Readonly<Record<string, string>>;
  readonly uptime_seconds: number;
  readonly store_kind?: string;
}

/** The NATS services API as the gateway reads it. */
export interface Discovery {
  /** `$SRV.INFO` fan-in: one row per live instance. */
  info(): Promise<readonly DiscoveredInstance[]>;
  /** `$SRV.STATS` fan-in: one row per live instance. */
  stats(): Promise<readonly InstanceStats[]>;
  /** Asks one instance of `service` its `_health`; throws when none answers. */
  health(service: string): Promise<ServiceHealthReport>;
}

/** Whether the bus connection is up (readiness, `runtime.health`). */
export interface BusState {
  isConnected(): boolean;
}

/** One message of the EVENTS stream before decoding (the `EventRecord` of `@ars/bus`). */
export interface EventRecord {
  /** The stream sequence: the frame's `sequence` and the SSE `id:`. */
  readonly seq: number;
  /** `ars.ev.<tenant>.<user>.<session>.<type…>`, identity tokens base64url-encoded. */
  readonly subject: string;
  /** The run's encoded token from the `Ars-Run` header; `_` for an event of no run. */
  readonly runToken: string;
  /** The stored JSON body. */
  readonly data: Uint8Array;
  /** When the stream stored it, in epoch milliseconds. */
  readonly storedAtMs: number;
  /** Matching messages after this one when it was delivered; 0 at the end of the stream. */
  readonly pending: number;
}

/** The retained range of the EVENTS stream. */
export interface EventLogBounds {
  /** First retained sequence; `lastSeq + 1` when nothing is retained. */
  readonly firstSeq: number;
  /** Last sequence ever stored. */
  readonly lastSeq: number;
}

/** A bounded read: ends after the record delivered with `pending` 0. */
export interface EventLogRead extends AsyncIterable<EventRecord> {
  /** Matching messages when the read began (0: the iteration yields nothing). */
  readonly pendingAtStart: number;
  /** Stops the read and frees its server-side consumer; safe at any time. */
  close(): Promise<void>;
}

/** The live tail of the whole stream, in sequence order, until closed. */
export interface EventLogTail extends AsyncIterable<EventRecord> {
  close(): Promise<void>;
}

/** The EVENTS stream as the gateway reads it (`eventStreamBounds`, `readEvents`, `tailEvents` of `@ars/bus`). */
export interface EventLog {
  bounds(): Promise<EventLogBounds>;
  /**
   * Opens a read of the messages matching one subject filter, from a
   * sequence or an instant (else from the first retained message).
   */
  read(options: {
    readonly filterSubject: string;
    readonly startSequence?: number;
    readonly startTime?: Date;
    readonly batch?: number;
  }): Promise<EventLogRead>;
  /**
   * The first sequence at or after `fromSequence` whose message matches the
   * filter, as the stream's leader holds it; `undefined` when none. A read's
   * consumer may sit on a replica still catching up: this confirms its end.
   */
  nextStored(options: { readonly filterSubject: string; readonly fromSequence: number }): Promise<number | undefined>;
  /** Follows every message from `startSequence` on, without gap or duplicate. */
  tail(options: { readonly startSequence: number }): Promise<EventLogTail>;
}

/** Limits of the event stream and the event reads. */
export interface EventLimits {
  /** Heartbeat comment interval of an SSE subscription, in ms. @default 15000 */
  readonly heartbeatMs?: number;
  /** Close a subscription that delivered nothing for this long, in ms; 0 never. @default 0 */
  readonly idleCloseMs?: number;
  /** Largest backlog held for one subscriber before it is dropped, in bytes. @default 1048576 */
  readonly subscriberBufferBytes?: number;
  /** Most stored events one events.list, events.aggregate or search.events call reads. @default 200000 */
  readonly scanLimit?: number;
  /** How long a `Last-Event-ID` replay keeps reading again after a failed read (nats-server restarting), in ms. @default 60000 */
  readonly replayRetryMs?: number;
}

/** Build facts reported by `runtime.info`. */
export interface BuildInfo {
  readonly instanceId: string;
  readonly displayName: string;
  readonly buildVersion: string;
  readonly buildCommit: string;
  /** The runtime's language version; this runtime reports Node's `process.version`. */
  readonly runtimeVersion: string;
}

/** Everything `buildApp` needs. */
export interface GatewayDeps {
  readonly logger: Logger;
  readonly verifier: TokenVerifier;
  /** Present in dev mode only: it enables `POST /v1/dev/bootstrap.json`. */
  readonly devIssuer?: DevTokenMinter;
  readonly rpc: RpcCaller;
  readonly events: EventSink;
  /** The EVENTS stream, read by events.subscribe, events.list, events.aggregate and search.events. */
  readonly eventLog: EventLog;
  readonly discovery: Discovery;
  readonly bus: BusState;
  readonly build: BuildInfo;
  /** Mints rotated tokens; absent: `auth.rotate_token` answers 501 `unimplemented`. */
  readonly tokenMinter?: TokenMinter;
  /** Revoked tokens; @default a list of this replica's own rotations only (no KV). */
  readonly revocations?: RevocationCheck;
  /** Streams large artifact bytes; absent: artifacts beyond one bus message are refused 413. */
  readonly blobs?: BlobTransfer;
  readonly limits?: {
    /** @default 1048576 */
    readonly bodyLimitBytes?: number;
    /** Largest `artifacts.put` body, in bytes. @default 94371840 (90 MiB) */
    readonly artifactBodyLimitBytes?: number;
    /**
     * Largest artifact forwarded inline (base64 in one bus message), in bytes;
     * larger ones are streamed through the object store. @default 774144
     */
    readonly inlineArtifactBytes?: number;
    /** How long search.query waits for each owner, in ms. @default 5000 */
    readonly searchSourceTimeoutMs?: number;
    /** How long a rotation waits for its revocation to come back through the KV watch, in ms. @default 2000 */
    readonly revocationDeliveryWaitMs?: number;
    /** Lifetime of bootstrap tokens in seconds. @default 43200 */
    readonly devTokenTtlSeconds?: number;
    /** How long runtime.info reuses a discovery snapshot, in ms. @default 2000 */
    readonly capabilitiesCacheMs?: number;
    /**
     * The token verifier's clock tolerance for `exp`, in seconds: an event
     * stream closes when its token's `exp` plus this has passed, as requests
     * with it are refused from then on. @default 30 (the verifier's default)
     */
    readonly tokenClockToleranceSeconds?: number;
    readonly events?: EventLimits;
    /** Bounds the OAuth callback's `_oauth.complete` (a code exchange with an authorization server), in ms. @default 15000 */
    readonly oauthCallbackTimeoutMs?: number;
  };
  /** The built browser console served at /console. @default apps/console/dist of this checkout */
  readonly consoleDir?: string;
  /** Milliseconds clock for uptime; @default performance.now */
  readonly now?: () => number;
}

import { createTokenVerifier } from '@ars/auth';
import type { VerifiedIdentity } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { EventHub } from '../../src/events/event-hub.ts';
import { buildGateway } from '../../src/app.ts';
import type {
  BlobTransfer,
  DevTokenMinter,
  EventLimits,
  DiscoveredInstance,
  Discovery,
  EventSink,
  GatewayDeps,
  InstanceStats,
  RpcCaller,
  RevocationCheck,
  ServiceHealthReport,
  TokenMinter,
  TokenVerifier,
} from '../../src/ports.ts';
import { MemoryEventLog } from './memory-event-log.ts';
import { AUDIENCE, ISSUER, claims, es256Key, signToken } from './tokens.ts';
import type { Claims, TestKey } from './tokens.ts';

/** One call the fake bus received. */
export interface RecordedCall {
  readonly service: string;
  readonly method: string;
  readonly identity: VerifiedIdentity;
  readonly body: Record<string, unknown>;
}

/** The RPC client fake: records every call and answers through `respond`. */
export class FakeRpc implements RpcCaller {
  readonly calls: RecordedCall[] = [];
  respond: (call: RecordedCall) => Promise<unknown> = async (call) => ({ served_by: call.service });

  async call(service: string, method: string, identity: VerifiedIdentity, body: unknown): Promise<unknown> {
    const call = { service, method, identity, body: body as Record<string, unknown> };
    this.calls.push(call);
    return this.respond(call);
  }

  get last(): RecordedCall | undefined {
    return this.calls.at(-1);
  }
}

/** The event publisher fake. */
export class FakeEvents implements EventSink {
  readonly published: Parameters<EventSink['publish']>[0][] = [];
  failWith: Error | undefined;

  async publish(event: Parameters<EventSink['publish']>[0]): Promise<unknown> {
    if (this.failWith !== undefined) throw this.failWith;
    this.published.push(event);
    return { sequence: this.published.length };
  }
}

/** Discovery fake: the live fleet as the test declares it. */
export class FakeDiscovery implements Discovery {
  instances: DiscoveredInstance[] = [];
  instanceStats: InstanceStats[] = [];
  readonly reports = new Map<string, ServiceHealthReport | Error>();

  async info(): Promise<readonly DiscoveredInstance[]> {
    return this.instances;
  }

  async stats(): Promise<readonly InstanceStats[]> {
    return this.instanceStats;
  }

  async health(service: string): Promise<ServiceHealthReport> {
    const report = this.reports.get(service);
    if (report === undefined) throw new Error(`no responders for ${service}`);
    if (report instanceof Error) throw report;
    return report;
  }
}

/** A live instance of `service` registering `methods` (implemented unless told). */
export function liveInstance(
  service: string,
  methods: readonly string[],
  options: { implemented?: boolean; id?: string; version?: string; metadata?: Record<string, string> } = {},
): DiscoveredInstance {
  return {
    name: service,
    id: options.id ?? `${service}-1`,
    version: options.version ?? '0.1.0',
    metadata: options.metadata ?? { instance_id: options.id ?? `${service}-1` },
    endpoints: methods.map((method) => ({
      name: method.replaceAll('.', '-'),
      subject: `ars.rpc.${service}.${method}`,
      queue_group: service,
      metadata: { method, implemented: String(options.implemented ?? true) },
    })),
  };
}

/** Records dev tokens minted by the bootstrap route. */
export class FakeDevIssuer implements DevTokenMinter {
  readonly minted: Parameters<DevTokenMinter['mint']>[0][] = [];

  async mint(request: Parameters<DevTokenMinter['mint']>[0]): Promise<string> {
    this.minted.push(request);
    return `dev-token-${this.minted.length}`;
  }
}

export interface HarnessOptions {
  readonly devIssuer?: DevTokenMinter;
  /** @default a real verifier trusting the harness key (ES256, ISSUER, AUDIENCE) */
  readonly verifier?: TokenVerifier;
  readonly bodyLimitBytes?: number;
  readonly connected?: boolean;
  readonly events?: EventLimits;
  /** @default a fresh MemoryEventLog */
  readonly log?: MemoryEventLog;
  readonly tokenMinter?: TokenMinter;
  readonly revocations?: RevocationCheck;
  readonly blobs?: BlobTransfer;
  /** More limits (artifact body and inline sizes, search timeout, …). */
  readonly limits?: GatewayDeps['limits'];
  /** @default a silent logger */
  readonly logger?: GatewayDeps['logger'];
  /** The verifier's clock tolerance for `exp` and `nbf`, told to the gateway too. @default the verifier's (30) */
  readonly clockToleranceSeconds?: number;
}

export interface SendOptions {
  /** Bearer token; `null` sends no Authorization header. @default a valid t1/u1/s1 token */
  readonly token?: string | null;
  readonly session?: string;
  readonly headers?: Record<string, string>;
  /** Raw payload; overrides the JSON body. */
  readonly raw?: string;
  readonly remoteAddress?: string;
}

/** A gateway app wired to fakes, with a real ES256 token verifier. */
export interface Harness {
  readonly app: FastifyInstance;
  readonly rpc: FakeRpc;
  readonly events: FakeEvents;
  readonly discovery: FakeDiscovery;
  /** The EVENTS stream, in memory. */
  readonly log: MemoryEventLog;
  readonly hub: EventHub;
  readonly key: TestKey;
  readonly bus: { connected: boolean };
  /** A valid token for `overrides` (default t1/u1/s1, no scopes). */
  token(overrides?: Claims): string;
  /** POST `body` as JSON to `path`. */
  post(path: string, body?: unknown, options?: SendOptions): Promise<LightMyRequestResponse>;
  send(method: string, path: string, body?: unknown, options?: SendOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export const TEST_BUILD = {
  instanceId: 'gateway-test',
  displayName: 'Agent Run Service (test)',
  buildVersion: '9.9.9',
  buildCommit: 'abc1234',
  runtimeVersion: 'v24.0.0',
} as const;

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const key = es256Key();
  const rpc = new FakeRpc();
  const events = new FakeEvents();
  const discovery = new FakeDiscovery();
  const bus = { connected: options.connected ?? true };
  const log = options.log ?? new MemoryEventLog();
  let clock = 1_000;
  const deps: GatewayDeps = {
    logger: options.logger ?? createLogger({ name: 'gateway-test', level: 'silent' }),
    verifier:
      options.verifier ??
      createTokenVerifier({
        issuer: ISSUER,
        audience: AUDIENCE,
        keys: [key.jwk as never],
        ...(options.clockToleranceSeconds === undefined
          ? {}
          : { clockToleranceSeconds: options.clockToleranceSeconds }),
      }),
    ...(options.devIssuer === undefined ? {} : { devIssuer: options.devIssuer }),
    ...(options.tokenMinter === undefined ? {} : { tokenMinter: options.tokenMinter }),
    ...(options.revocations === undefined ? {} : { revocations: options.revocations }),
    ...(options.blobs === undefined ? {} : { blobs: options.blobs }),
    rpc,
    events,
    eventLog: log,
    discovery,
    bus: { isConnected: () => bus.connected },
    build: TEST_BUILD,
    limits: {
      capabilitiesCacheMs: 0,
      devTokenTtlSeconds: 3600,
      ...(options.bodyLimitBytes === undefined ? {} : { bodyLimitBytes: options.bodyLimitBytes }),
      ...(options.events === undefined ? {} : { events: options.events }),
      ...(options.clockToleranceSeconds === undefined
        ? {}
        : { tokenClockToleranceSeconds: options.clockToleranceSeconds }),
      ...options.limits,
    },
    now: () => (clock += 1_000),
  };
  const { app, hub } = buildGateway(deps);
  await app.ready();
  const token = (overrides: Claims = {}) => signToken(key, claims(overrides));
  const send = (method: string, path: string, body?: unknown, sendOptions: SendOptions = {}) => {
    const bearer = sendOptions.token === undefined ? token() : sendOptions.token;
    const headers: Record<string, string> = {
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(sendOptions.session === undefined ? {} : { 'x-service-session': sendOptions.session }),
    };
    const payload = sendOptions.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    if (payload !== undefined) headers['content-type'] = 'application/json';
    return app.inject({
      method: method as 'POST',
      url: path,
      headers: { ...headers, ...sendOptions.headers },
      ...(payload === undefined ? {} : { payload }),
      ...(sendOptions.remoteAddress === undefined ? {} : { remoteAddress: sendOptions.remoteAddress }),
    });
  };
  return {
    app,
    rpc,
    events,
    discovery,
    log,
    hub,
    key,
    bus,
    token,
    send,
    post: (path, body, sendOptions) => send('POST', path, body, sendOptions),
    close: () => app.close(),
  };
}

/** An identity of the default test token plus `scopes`. */
export function scoped(...scopes: string[]): Claims {
  return { scopes };
}

/** Options of {@link openEventStream}. */
export interface StreamOptions {
  readonly token?: string;
  readonly session?: string;
  readonly lastEventId?: string | number;
  readonly run?: string;
  readonly types?: string;
  readonly query?: string;
}

/** `GET /v1/events` through inject, read as a stream; `close()` hangs up. */
export async function openEventStream(h: Harness, options: StreamOptions = {}) {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? h.token()}` };
  if (options.session !== undefined) headers['x-service-session'] = options.session;
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  if (options.run !== undefined) headers['x-service-run'] = options.run;
  if (options.types !== undefined) headers['x-service-event-type'] = options.types;
  const response = await h.app.inject({
    method: 'GET',
    url: `/v1/events${options.query === undefined ? '' : `?${options.query}`}`,
    headers,
    payloadAsStream: true,
    signal: abort.signal,
  });
  return { response, abort };
}

import { randomUUID } from 'node:crypto';
import { connectBus, createEventPublisher } from '@ars/bus';
import type { Bus, EventPublisher } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { readGatewayConfig } from '../../src/config.ts';
import { startGateway } from '../../src/server.ts';
import type { GatewayRuntime } from '../../src/server.ts';
import { SseReader } from './sse-reader.ts';

const logger = createLogger({ name: 'gateway-events-int', level: 'silent' });

/** A gateway listening on a free port of 127.0.0.1, in this process. */
export interface IntGateway {
  readonly runtime: GatewayRuntime;
  readonly baseUrl: string;
  /** A dev token for this identity (scopes default none). */
  token(identity: Triple, scopes?: readonly string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface Triple {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** Starts a gateway on `natsUrl` with extra environment (e.g. ARS_EVENTS_* limits). */
export async function startIntGateway(natsUrl: string, env: Record<string, string> = {}): Promise<IntGateway> {
  const config = readGatewayConfig({
    NATS_URL: natsUrl,
    LOG_LEVEL: 'silent',
    INSTANCE_ID: `gateway-int-${randomUUID().slice(0, 6)}`,
    BUILD_COMMIT: 'int',
    ARS_CAPABILITIES_CACHE_MS: '0',
    ...env,
  });
  const runtime = await startGateway(config, { logger });
  const baseUrl = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    runtime,
    baseUrl,
    async token(identity, scopes = []) {
      const response = await fetch(`${baseUrl}/v1/dev/bootstrap.json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...identity, scopes }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      const token = body.token ?? body.access_token;
      if (typeof token !== 'string') throw new Error(`bootstrap answered ${response.status} ${JSON.stringify(body)}`);
      return token;
    },
    stop: () => runtime.stop(),
  };
}

/** What a test subscription asks for. */
export interface SubscribeOptions {
  readonly lastEventId?: number;
  readonly run?: string;
  readonly types?: string;
  readonly admin?: boolean;
  readonly session?: string;
}

/** An open `GET /v1/events` over real HTTP. */
export interface IntStream {
  readonly status: number;
  readonly reader: SseReader;
  /** The response body text when the request was refused. */
  readonly refusal?: { code: string; message: string };
  close(): void;
}

/** Opens `GET /v1/events` with fetch. */
export async function subscribe(baseUrl: string, token: string, options: SubscribeOptions = {}): Promise<IntStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  if (options.run !== undefined) headers['x-service-run'] = options.run;
  if (options.types !== undefined) headers['x-service-event-type'] = options.types;
  if (options.session !== undefined) headers['x-service-session'] = options.session;
  const response = await fetch(`${baseUrl}/v1/events${options.admin ? '?admin=1' : ''}`, {
    headers,
    signal: abort.signal,
  });
  if (!response.ok) {
    const refusal = (await response.json()) as { code: string; message: string };
    const empty = (async function* () {})();
    return { status: response.status, reader: new SseReader(empty), refusal, close: () => abort.abort() };
  }
  const body = response.body!;
  return {
    status: response.status,
    reader: new SseReader(body as unknown as AsyncIterable<Uint8Array>),
    close: () => abort.abort(),
  };
}

/** Subscribes and waits for `replay.complete`. */
export async function subscribeLive(baseUrl: string, token: string, options: SubscribeOptions = {}) {
  const stream = await subscribe(baseUrl, token, options);
  if (stream.status !== 200) throw new Error(`subscribe answered ${stream.status} ${JSON.stringify(stream.refusal)}`);
  await stream.reader.until((reader) => reader.named('replay.complete').length > 0, 20_000);
  return stream;
}

/** A service-side publisher on its own connection, as the other services publish. */
export async function startPublisher(natsUrl: string): Promise<{ bus: Bus; publisher: EventPublisher }> {
  const bus = await connectBus({ servers: natsUrl, name: 'events-int-publisher' });
  return { bus, publisher: createEventPublisher(bus, { source: 'events-int', logger }) };
}

/** A task.started event of `triple`. */
export function started(triple: Triple, run = 'run-1', extra: Record<string, unknown> = {}) {
  return {
    type: 'task.started',
    identity: { ...triple, run },
    payload: { TaskID: run, PriorState: 'pending', ...extra },
  };
}

/** Publishes `count` events of `triple` with bounded concurrency; resolves with their sequences in order. */
export async function publishMany(
  publisher: EventPublisher,
  triple: Triple,
  count: number,
  run = 'bulk',
): Promise<number[]> {
  const sequences: number[] = [];
  for (let start = 0; start < count; start += 500) {
    const window = Array.from({ length: Math.min(500, count - start) }, (_, i) =>
      publisher.publish(started(triple, run, { TaskID: `${run}-${start + i}` })),
    );
    for (const result of await Promise.all(window)) sequences.push(result.sequence);
  }
  return sequences.sort((a, b) => a - b);
}

/** A fresh (tenant, user, session) for one test. */
export function triple(prefix: string): Triple {
  const id = randomUUID().slice(0, 8);
  return { tenant: `${prefix}-t-${id}`, user: `${prefix}-u-${id}`, session: `${prefix}-s-${id}` };
}

/**
 * @ars/service-kit/testing: start a kit-defined service in the test's own
 * process against a nats-server the test spawned, and call it over NATS.
 * Test support only; production code never imports this entry.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { isServiceError } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { connectBus, createRpcClient, decodeEventMessage, eventFilterSubject, readEvents } from '@ars/bus';
import type { Bus, EventFilter, RpcClient } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';
import { loadConfig } from './config.ts';
import type { BaseServiceConfig, Environment } from './config.ts';
import type { ServiceDefinition } from './service-definition.ts';
import { startService } from './start-service.ts';
import type { RunningService, StartOverrides } from './start-service.ts';

/** The identity tests call with unless they pass their own. */
export const TEST_IDENTITY: VerifiedIdentity = Object.freeze({
  tenant: 'test-tenant',
  user: 'test-user',
  session: 'test-session',
  scopes: Object.freeze(['admin']),
});

/** A verified identity as the gateway would put in the request headers. */
export function caller(
  tenant: string,
  user: string,
  session: string,
  scopes: readonly string[] = [],
): VerifiedIdentity {
  return { tenant, user, session, scopes };
}

/** A tenant name no other test uses. */
export function uniqueTenant(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** Options of {@link startInProcess}. */
export interface InProcessOptions {
  /** The spawned server's URL. */
  readonly natsUrl: string;
  /** More variables for the service's config; `LOG_LEVEL` defaults to `silent`. */
  readonly env?: Environment;
  /** Lines go here; @default a logger at the config's `LOG_LEVEL`. */
  readonly logger?: Logger;
  /** @default true: an in-memory store, nothing written under `DATA_DIR`. */
  readonly inMemoryStore?: boolean;
  readonly overrides?: Omit<StartOverrides, 'logger' | 'inMemoryStore'>;
}

/** A service started in this process plus a client connection to call it. */
export interface InProcessService {
  readonly running: RunningService;
  /** The client side's own connection (not the service's). */
  readonly bus: Bus;
  readonly rpc: RpcClient;
  /** Calls one of this service's methods as {@link TEST_IDENTITY} unless told. */
  call(method: string, body: unknown, identity?: VerifiedIdentity): Promise<unknown>;
  /** Stops the service, then closes the client connection. */
  stop(): Promise<void>;
}

/** Starts `definition` in-process with its config read from `options` (never `process.env`). */
export async function startInProcess<S extends z.ZodType<BaseServiceConfig>>(
  definition: ServiceDefinition<S>,
  options: InProcessOptions,
): Promise<InProcessService> {
  const config = loadConfig(definition.config, { LOG_LEVEL: 'silent', ...options.env, NATS_URL: options.natsUrl });
  const running = await startService(definition, config, {
    ...options.overrides,
    logger: options.logger ?? createLogger({ name: definition.name, level: config.LOG_LEVEL }),
    inMemoryStore: options.inMemoryStore ?? true,
  });
  const bus = await connectBus({ servers: options.natsUrl, name: `${definition.name}-test-client` });
  const rpc = createRpcClient(bus, { timeoutMs: 5000 });
  return {
    running,
    bus,
    rpc,
    call: (method, body, identity = TEST_IDENTITY) => rpc.call(definition.name, method, identity, body),
    stop: async () => {
      try {
        await running.stop();
      } finally {
        await bus.close();
      }
    },
  };
}

/** A call's outcome as data: the result, or the error code and message. */
export type CallOutcome =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Settles `call` into a {@link CallOutcome}; a non-ServiceError rejection is rethrown. */
export async function outcomeOf(call: Promise<unknown>): Promise<CallOutcome> {
  try {
    return { ok: true, result: await call };
  } catch (error) {
    if (isServiceError(error)) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

/**
 * Every stored event matching `filter` (and its run, when given) after sequence `after`, in stream
 * order: what a client subscribing with `Last-Event-ID: after` would get
 * now. Publishers await the stream's acknowledgement before answering, so
 * call it once the write under test resolved: nothing to wait for.
 */
export async function storedEvents(
  bus: Bus,
  filter: EventFilter & { readonly run?: string },
  after = 0,
): Promise<EventFrame[]> {
  const { run, ...subjectFilter } = filter;
  const filterSubject = eventFilterSubject(subjectFilter);
  const frames: EventFrame[] = [];
  // A read ends at the first message delivered with a pending count of 0,
  // which can fall short while the stream is appended to: read again after
  // the last one until a read starts with nothing pending.
  for (let last = after; ;) {
    const reader = await readEvents(bus, { filterSubject, ...(last > 0 ? { startSequence: last + 1 } : {}) });
    const before = last;
    try {
      for await (const record of reader) {
        last = record.seq;
        const frame = decodeEventMessage(record);
        if (run === undefined || frame.run === run) frames.push(frame);
      }
    } finally {
      await reader.close();
    }
    if (last === before) return frames;
  }
}

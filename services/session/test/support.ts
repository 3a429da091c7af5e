/**
 * Test support of the session service: a spawned nats-server, the service
 * in-process, fakes of the three cascade endpoints (and `tasks.get`), a
 * publisher of task events, and readers of the EVENTS stream.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EVENTS_STREAM,
  connectBus,
  createEventPublisher,
  decodeEventMessage,
  eventFilterSubject,
  serveService,
  startNatsServer,
} from '@ars/bus';
import type { Bus, EventFilter, EventPublisher, NatsServerHandle, RpcHandler, ServedService } from '@ars/bus';
import { ServiceError } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import type { Environment } from '@ars/service-kit';
import { startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { sessionService } from '../src/service.ts';

export const silent = createLogger({ name: 'session-test', level: 'silent' });

/** A fresh identity: unique tenant, user and session, with the given scopes. */
export function freshIdentity(scopes: readonly string[] = []): VerifiedIdentity {
  const id = randomUUID().slice(0, 8);
  return { tenant: `t-${id}`, user: `u-${id}`, session: `s-${id}`, scopes };
}

/** The same owner, another session. */
export function sibling(identity: VerifiedIdentity, session = `s-${randomUUID().slice(0, 8)}`): VerifiedIdentity {
  return { ...identity, session };
}

/** The body identity the gateway forwards after reconciliation: the full triple. */
export function bodyIdentity(identity: VerifiedIdentity): { tenant: string; user: string; session: string } {
  return { tenant: identity.tenant, user: identity.user, session: identity.session };
}

/** Polls until `probe` returns a truthy value. */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: last });
    await sleep(50);
  }
}

/**
 * Lets the wall clock move past the current millisecond, so that two writes
 * get distinct instants (catalog instants have millisecond resolution).
 */
export async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() <= now) await sleep(1);
}

/** Every event of the EVENTS stream matching `filter`, in stream order. */
export async function readEvents(bus: Bus, filter: EventFilter): Promise<EventFrame[]> {
  const subject = eventFilterSubject(filter);
  const info = await bus.jsm.streams.info(EVENTS_STREAM, { subjects_filter: subject });
  const total = Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  if (total === 0) return [];
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, { filter_subjects: subject });
  const frames: EventFrame[] = [];
  while (frames.length < total) {
    const batch = await consumer.fetch({ max_messages: total - frames.length, expires: 2_000 });
    let got = 0;
    for await (const msg of batch) {
      frames.push(decodeEventMessage(msg));
      got += 1;
    }
    if (got === 0) break;
  }
  return frames;
}

/** The session.* events of one session. */
export async function sessionEvents(bus: Bus, identity: VerifiedIdentity): Promise<EventFrame[]> {
  return readEvents(bus, { ...bodyIdentity(identity), type: 'session.>' });
}

/** Waits until the session has an event of `type`; returns all its session events. */
export async function waitForSessionEvent(
  bus: Bus,
  identity: VerifiedIdentity,
  type: string,
  count = 1,
): Promise<EventFrame[]> {
  return waitFor(async () => {
    const frames = await sessionEvents(bus, identity);
    return frames.filter((f) => f.type === type).length >= count ? frames : undefined;
  }, `${count} × ${type}`);
}

/** Replies the fakes give, per session id; a function may throw to fail the call. */
type Responder = (triple: { tenant: string; user: string; session: string }) => unknown;

/** Fakes of the other services' endpoints the session service calls. */
export interface Fakes {
  /** Calls received, in order: `<service>/<endpoint>` and the body. */
  readonly calls: { endpoint: string; body: Record<string, unknown> }[];
  /** `_tasks.erase_session`; default `{ tasks_deleted: 0, state_records_deleted: 0 }`. */
  tasks: Responder;
  /** `_artifact.erase_session`; default `{ artifacts_deleted: 0 }`. */
  artifacts: Responder;
  /** `_memory.erase_session`; default `{ purged: true }`. */
  memory: Responder;
  /** `_agent.erase_session`; default `{ skills_deleted: 0, settings_deleted: 0 }`. */
  agentConfig: Responder;
  /** Queries `tasks.get` answers with, by task id; a missing id is `not_found`. */
  readonly queries: Map<string, string>;
  stop(): Promise<void>;
}

/** Serves the fakes on `bus` under the real services' names. */
export async function startFakes(bus: Bus): Promise<Fakes> {
  const calls: Fakes['calls'] = [];
  const queries = new Map<string, string>();
  const fakes: Fakes = {
    calls,
    queries,
    tasks: () => ({ tasks_deleted: 0, state_records_deleted: 0 }),
    artifacts: () => ({ artifacts_deleted: 0 }),
    memory: () => ({ purged: true }),
    agentConfig: () => ({ skills_deleted: 0, settings_deleted: 0 }),
    stop: async () => undefined,
  };
  // Members a test does not set are answered as the real endpoint would (zero counts): the replies meet their contract.
  const eraser =
    (endpoint: string, pick: () => Responder, defaults: Record<string, unknown> = {}): RpcHandler =>
    async ({ body }) => {
      const triple = body as { tenant: string; user: string; session: string };
      calls.push({ endpoint, body: body as Record<string, unknown> });
      return { ...defaults, ...((await pick()(triple)) as object) };
    };
  const served: ServedService[] = [];
  const serve = async (service: string, handlers: Record<string, RpcHandler>) =>
    served.push(
      await serveService(bus, { service, version: '0.0.1', instanceId: `${service}-fake`, handlers, logger: silent }),
    );
  await serve('run-executor', {
    '_tasks.erase_session': eraser('run-executor/_tasks.erase_session', () => fakes.tasks),
    'tasks.get': async ({ body, identity }) => {
      const taskId = (body as { task_id: string }).task_id;
      calls.push({ endpoint: 'run-executor/tasks.get', body: { ...(body as object), caller: identity } });
      const query = queries.get(taskId);
      if (query === undefined) throw new ServiceError('not_found', 'tasks.get: not found');
      return { task: { task_id: taskId, query } };
    },
  });
  await serve('artifact', {
    '_artifact.erase_session': eraser('artifact/_artifact.erase_session', () => fakes.artifacts, {
      uploads_discarded: 0,
    }),
  });
  await serve('memory', {
    '_memory.erase_session': eraser('memory/_memory.erase_session', () => fakes.memory, {
      items_deleted: 0,
      traces_deleted: 0,
    }),
  });
  await serve('agent-registry', {
    '_agent.erase_session': eraser('agent-registry/_agent.erase_session', () => fakes.agentConfig),
  });
  fakes.stop = async () => {
    for (const s of served) await s.stop();
  };
  return fakes;
}

/** A test bed: nats-server, fakes, a publisher posing as the run-executor, and the session service. */
export interface Bed {
  readonly nats: NatsServerHandle;
  /** The test's own connection (fakes, reads, publishes). */
  readonly bus: Bus;
  readonly fakes: Fakes;
  /** Publishes events as the run-executor would. */
  readonly publisher: EventPublisher;
  service: InProcessService;
  /** A directory for persistent data (`DATA_DIR`). */
  readonly dataDir: string;
  /** Calls a session method as `identity`. */
  call(method: string, body: unknown, identity: VerifiedIdentity): Promise<unknown>;
  /** `_session.admit` of the identity's triple. */
  admit(identity: VerifiedIdentity): Promise<unknown>;
  /** Stops the service and starts it again with the same environment (same data directory). */
  restart(env?: Environment): Promise<void>;
  stop(): Promise<void>;
}

/** Options of {@link startBed}. */
export interface BedOptions {
  readonly env?: Environment;
  /** Keep the catalog in `dataDir` (a restart keeps it). @default false */
  readonly persistent?: boolean;
}

/** Starts a test bed. */
export async function startBed(options: BedOptions = {}): Promise<Bed> {
  const storeDir = await mkdtemp(join(tmpdir(), 'ars-session-nats-'));
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-session-data-'));
  const nats = await startNatsServer({ storeDir });
  const bus = await connectBus({ servers: nats.url, name: 'session-test' });
  const fakes = await startFakes(bus);
  const publisher = createEventPublisher(bus, { source: 'run-executor', logger: silent });
  let env: Environment = { DATA_DIR: dataDir, SESSION_ERASURE_RETRY_SECONDS: '3600', ...options.env };
  const start = () =>
    startInProcess(sessionService, { natsUrl: nats.url, env, inMemoryStore: options.persistent !== true });
  const bed: Bed = {
    nats,
    bus,
    fakes,
    publisher,
    dataDir,
    service: await start(),
    call: (method, body, identity) => bed.service.call(method, body, identity),
    admit: (identity) => bed.service.rpc.call('session', '_session.admit', identity, bodyIdentity(identity)),
    async restart(next) {
      await bed.service.stop();
      if (next !== undefined) env = { ...env, ...next };
      bed.service = await start();
    },
    async stop() {
      await bed.service.stop().catch(() => undefined);
      await fakes.stop();
      await bus.close();
      await nats.stop();
      await rm(storeDir, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return bed;
}

/** Publishes one task event of `identity`'s session for run `taskId`. */
export async function publishTask(
  bed: Bed,
  identity: VerifiedIdentity,
  type: string,
  taskId: string,
  payload: Record<string, unknown> = {},
): Promise<number> {
  const defaults: Record<string, Record<string, unknown>> = {
    'task.spawned': { TaskID: taskId, Kind: 'run', ParentTaskID: '', Priority: 0, IdempotencyKey: '' },
    'task.started': { TaskID: taskId, PriorState: 'pending' },
    'task.completed': { TaskID: taskId, NotifyOnComplete: false },
    'task.failed': { TaskID: taskId, ErrorCode: 'internal' },
    'task.cancelled': { TaskID: taskId, Reason: 'user', Cascaded: false },
  };
  const result = await bed.publisher.publish({
    type,
    identity: { ...bodyIdentity(identity), run: taskId },
    payload: { ...defaults[type], ...payload },
  });
  return result.sequence;
}

/** Publishes a whole run: spawned, started, then `terminal`. */
export async function publishRun(
  bed: Bed,
  identity: VerifiedIdentity,
  taskId: string,
  terminal: 'task.completed' | 'task.failed' | 'task.cancelled' = 'task.completed',
): Promise<void> {
  await publishTask(bed, identity, 'task.spawned', taskId);
  await publishTask(bed, identity, 'task.started', taskId);
  await publishTask(bed, identity, terminal, taskId);
}

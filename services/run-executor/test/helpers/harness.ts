import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus, controlSubject, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { defineService } from '@ars/service-kit';
import { startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { RunExecutorConfig } from '../../src/config.ts';
import type { PauseRecord } from '../../src/domain/pause.ts';
import { apiSettingsOf, createApiHandlers } from '../../src/handlers/index.ts';
import { PAUSES_COLLECTION, createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';
import { createErasedSessionRepository } from '../../src/store/erased-session.repository.ts';
import { serveFakes } from './fakes.ts';
import type { Fakes } from './fakes.ts';

/**
 * The run-executor's API side in-process, on its own nats-server, with fakes
 * of the other services' internal endpoints. The engine is left out (these
 * tests drive task state through the repository the engine uses), so no
 * RUNS message is consumed and no task moves unless a test moves it.
 */
export interface Harness {
  readonly nats: NatsServerHandle;
  readonly service: InProcessService;
  readonly fakes: Fakes;
  /** The service's own repository (same store), to play the engine's part. */
  readonly tasks: TaskRepository;
  /** The service's store, to write records the engine owns (pauses). */
  readonly store: Store;
  /** A separate client connection (event reads, fake inboxes). */
  readonly bus: Bus;
  call(method: string, body: Record<string, unknown>, identity: VerifiedIdentity): Promise<unknown>;
  start(identity: VerifiedIdentity, body?: Record<string, unknown>): Promise<{ task_id: string; reused: boolean }>;
  insertPause(pause: PauseRecord): Promise<void>;
  /**
   * Answers the run's control inbox like a live run (with `reply`; `null`
   * never answers); returns what it received. The controls wait 300 ms.
   */
  serveInbox(taskId: string, reply?: unknown): Promise<{ received: unknown[]; stop(): void }>;
  stop(): Promise<void>;
}

const ApiOnlyService = (capture: (store: Store) => void) =>
  defineService({
    name: 'run-executor',
    version: '0.1.0',
    config: RunExecutorConfig,
    build: async ({ config, store, bus, rpc, publisher, logger }) => {
      capture(store);
      const tasks = await createTaskRepository(store);
      return createApiHandlers(
        {
          tasks,
          bus,
          rpc,
          publisher,
          logger,
          settings: apiSettingsOf(config),
        },
        { erasedSessions: createErasedSessionRepository(store) },
      );
    },
  });

/** Starts everything; `stop()` undoes it all. */
export async function startHarness(): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'ars-run-executor-api-'));
  const nats = await startNatsServer({ storeDir: dir });
  let store: Store | undefined;
  const service = await startInProcess(
    ApiOnlyService((s) => (store = s)),
    {
      natsUrl: nats.url,
      env: { CONTROL_REPLY_TIMEOUT_MS: '300' },
    },
  );
  if (store === undefined) throw new Error('the service did not build');
  const bus = await connectBus({ servers: nats.url, name: 'run-executor-test' });
  const fakes = await serveFakes(bus, createLogger({ name: 'fakes', level: 'silent' }));
  const tasks = await createTaskRepository(store);
  const pauses = store.collection<PauseRecord>(PAUSES_COLLECTION);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const call = (method: string, body: Record<string, unknown>, identity: VerifiedIdentity) =>
    service.call(method, { identity: {}, ...body }, identity);

  return {
    nats,
    service,
    fakes,
    tasks,
    store,
    bus,
    call,
    start: async (identity, body = {}) =>
      (await call('start', { query: 'what is up?', ...body }, identity)) as { task_id: string; reused: boolean },
    insertPause: async (pause) => {
      await pauses.insertOne(pause);
    },
    async serveInbox(taskId, reply = { accepted: true }) {
      const received: unknown[] = [];
      const sub = bus.nc.subscribe(controlSubject(taskId), {
        callback: (_error, msg) => {
          received.push(JSON.parse(decoder.decode(msg.data)));
          if (reply !== null) msg.respond(encoder.encode(JSON.stringify(reply)));
        },
      });
      await bus.nc.flush(); // the subscription is live on the server before a control is sent
      return { received, stop: () => sub.unsubscribe() };
    },
    stop: async () => {
      await fakes.stop().catch(() => undefined);
      await bus.close().catch(() => undefined);
      await service.stop().catch(() => undefined);
      await nats.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A caller in a fresh tenant (tests never share data). */
export function newCaller(overrides: Partial<VerifiedIdentity> = {}): VerifiedIdentity {
  return { tenant: `t-${randomUUID()}`, user: 'alice', session: 's-1', scopes: [], ...overrides };
}

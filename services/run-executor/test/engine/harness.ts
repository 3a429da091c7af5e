import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOVERNANCE_PROVIDER_KEY, refuse, ServiceError } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import {
  connectBus,
  decodeEventMessage,
  DeliverPolicy,
  EVENTS_STREAM,
  eventFilterSubject,
  RUNS_STREAM,
  serveService,
  startNatsServer,
} from '@ars/bus';
import type { Bus, NatsServerHandle, RpcRequest, ServedService } from '@ars/bus';
import { defineService } from '@ars/service-kit';
import type { Environment } from '@ars/service-kit';
import { startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { consumerName } from '../../src/engine/priority.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';
import { runExecutorService } from '../../src/service.ts';

/**
 * The whole run-executor (API side and engine) in-process on its own
 * nats-server, with fakes of agent-registry `_agent.resolve` (configurable
 * per agent), session `_session.admit` and governance (admitting every
 * call), and helpers that read a run's events back from the EVENTS stream.
 */

/** A live view of one run's events, in stream order. */
export interface RunWatch {
  readonly events: EventFrame[];
  /** Resolves with the first event (from the start) matching `predicate`. */
  until(predicate: (e: EventFrame) => boolean, timeoutMs?: number): Promise<EventFrame>;
  /** Resolves with the run's terminal event. */
  terminal(timeoutMs?: number): Promise<EventFrame>;
  types(): string[];
  stop(): void;
}

export interface EngineHarness {
  readonly nats: NatsServerHandle;
  /** The run-executor now (another one after {@link restart}). */
  readonly service: InProcessService;
  readonly bus: Bus;
  readonly store: Store;
  readonly tasks: TaskRepository;
  /** Agent configurations `_agent.resolve` answers with, by agent id (default agent: `{}`). */
  readonly agentConfigs: Map<string, Record<string, unknown>>;
  /** The governance fake every LLM call is admitted by (stop it to take governance away). */
  readonly governance: GovernanceFake;
  call(method: string, body: Record<string, unknown>, identity: VerifiedIdentity): Promise<unknown>;
  /** Starts a run and returns its id and a watch on its events (subscribed before the start). */
  start(identity: VerifiedIdentity, body: Record<string, unknown>): Promise<{ taskId: string; watch: RunWatch }>;
  control(
    method: string,
    taskId: string,
    identity: VerifiedIdentity,
    payload?: Record<string, unknown>,
    eventId?: string,
  ): Promise<unknown>;
  watch(identity: VerifiedIdentity, taskId: string): Promise<RunWatch>;
  /**
   * Stops the run-executor (a drain: a run waiting for a human is handed
   * back at once) and starts another on the same store, which claims the
   * runs handed back. Needs {@link EngineHarnessOptions.persistentStore}.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const TERMINAL_TYPES = ['task.completed', 'task.failed', 'task.cancelled'];

/** A caller in a fresh tenant (tests never share data). */
export function newCaller(overrides: Partial<VerifiedIdentity> = {}): VerifiedIdentity {
  return { tenant: `t-${randomUUID()}`, user: 'alice', session: `s-${randomUUID()}`, scopes: [], ...overrides };
}

/** Watches one run's events from the start of the stream, through an ordered consumer. */
export async function watchRun(bus: Bus, identity: VerifiedIdentity, taskId: string): Promise<RunWatch> {
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
    filter_subjects: eventFilterSubject({
      tenant: identity.tenant,
      user: identity.user,
      session: identity.session,
    }),
    deliver_policy: DeliverPolicy.All,
  });
  const events: EventFrame[] = [];
  const waiters = new Set<() => void>();
  const messages = await consumer.consume();
  void (async () => {
    for await (const msg of messages) {
      const event = decodeEventMessage(msg);
      if (event.run !== taskId) continue;
      events.push(event);
      for (const w of waiters) w();
    }
  })().catch(() => undefined);
  const until = (predicate: (e: EventFrame) => boolean, timeoutMs = 10_000): Promise<EventFrame> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = events.find(predicate);
        if (found === undefined) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`event not seen within ${timeoutMs} ms; saw ${events.map((e) => e.type).join(', ')}`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
    });
  return {
    events,
    until,
    terminal: (timeoutMs) => until((e) => TERMINAL_TYPES.includes(e.type), timeoutMs),
    types: () => events.map((e) => e.type),
    stop: () => void messages.stop(),
  };
}

/**
 * Serves `_agent.resolve`, `_agent.effective_config` (the configuration as
 * the agent layer alone) and `_session.admit` fakes on `bus`.
 */
export async function serveEngineFakes(
  bus: Bus,
  agentConfigs: Map<string, Record<string, unknown>>,
): Promise<ServedService[]> {
  const logger = createLogger({ name: 'fakes', level: 'silent' });
  const configOf = (agentId: string) => {
    const config = agentConfigs.get(agentId) ?? (agentId === 'default' ? {} : undefined);
    if (config === undefined)
      throw new ServiceError('invalid_request', `agent_id ${agentId} names no agent configuration`);
    return config;
  };
  const resolve = async ({ body }: RpcRequest) => {
    const b = body as { agent_id: string };
    return { agent_id: b.agent_id, revision_id: `rev-${b.agent_id}`, config: configOf(b.agent_id) };
  };
  const effective = async ({ body }: RpcRequest) => {
    const b = body as { agent_id: string };
    const config = configOf(b.agent_id);
    return {
      agent_id: b.agent_id,
      revision_id: `rev-${b.agent_id}`,
      config,
      source_disables: [],
      skills: [],
      layers: [{ layer: 'agent', revision_id: `rev-${b.agent_id}`, applied_keys: Object.keys(config).sort() }],
      content_hash: `sha256:fake-${b.agent_id}`,
    };
  };
  const admit = async () => ({ state: 'open' });
  const serve = (service: string, handlers: Record<string, (r: RpcRequest) => Promise<unknown>>) =>
    serveService(bus, { service, version: '0.0.1', instanceId: `fake-${service}`, handlers, logger });
  return [
    await serve('agent-registry', { '_agent.resolve': resolve, '_agent.effective_config': effective }),
    await serve('session', { '_session.admit': admit }),
  ];
}

/**
 * Resolves once a run of bucket `normal` was handed back and offered again
 * (RUNS counts a redelivered message until it is acknowledged).
 */
export async function untilRedelivered(bus: Bus, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await bus.jsm.consumers.info(RUNS_STREAM, consumerName('normal'))).num_redelivered === 0) {
    if (Date.now() > deadline) throw new Error(`no run was handed back and offered again within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A cost governance was asked to record (`_governance.record_cost`, or `record_cost` of an admission). */
export interface RecordedCost {
  readonly call_id: string;
  readonly cost_usd: number;
}

/** A governance fake's state: what it recorded, and the failover chain it answers. */
export interface GovernanceFake {
  readonly served: ServedService;
  readonly recorded: RecordedCost[];
  /** The provider `_governance.failover` answers after each provider name (none: `null`, the chain ends). */
  readonly failovers: Map<string, { readonly name: string; readonly kind: string }>;
}

/**
 * Serves a governance fake on `bus` (runs fail closed without governance):
 * it admits every LLM call as asked, keeps every cost it is asked to record
 * (duplicates included), answers `failovers`, installs no provider key and
 * sets no tenant overrides.
 */
export async function serveGovernanceFake(bus: Bus): Promise<GovernanceFake> {
  const recorded: RecordedCost[] = [];
  const failovers: GovernanceFake['failovers'] = new Map();
  const admit = async ({ body }: RpcRequest) => {
    const b = body as { requested_max_tokens: number; record_cost?: RecordedCost };
    if (b.record_cost !== undefined) recorded.push(b.record_cost);
    const model = (body as { model: string }).model;
    return { allowed: true, tier: 'standard', model, max_tokens: b.requested_max_tokens, clipped: false, wait_ms: 0 };
  };
  const record = async ({ body }: RpcRequest) => {
    recorded.push(body as RecordedCost);
    return { tier: 'standard', duplicate: false, spend: [] };
  };
  const failover = async ({ body }: RpcRequest) => {
    const b = body as { from_provider: string; hop_index: number };
    return { provider: failovers.get(b.from_provider) ?? null, hop_index: b.hop_index, remaining_hops: 0 };
  };
  const overrides = async ({ body }: RpcRequest) => ({ tenant: (body as { tenant: string }).tenant, overrides: {} });
  const providerKey = async () => {
    throw refuse(GOVERNANCE_PROVIDER_KEY, 'no_key', 'no key is installed for the provider');
  };
  const served = await serveService(bus, {
    service: 'governance',
    version: '0.0.1',
    instanceId: 'fake-governance',
    handlers: {
      '_governance.admit_llm_call': admit,
      '_governance.record_cost': record,
      '_governance.failover': failover,
      '_governance.provider_key': providerKey,
      '_governance.effective_overrides': overrides,
    },
    logger: createLogger({ name: 'fakes', level: 'silent' }),
  });
  return { served, recorded, failovers };
}

/** Options of {@link startEngineHarness}. */
export interface EngineHarnessOptions {
  /** Wraps the store the service uses (faults for crash tests); `EngineHarness.store` stays the plain one. */
  readonly wrapStore?: (store: Store) => Store;
  /** Keeps the store under the harness's data directory (not in memory), so that {@link EngineHarness.restart} works. */
  readonly persistentStore?: boolean;
}

/** Starts nats-server, the fakes and the full service with `env`. */
export async function startEngineHarness(
  env: Environment = {},
  options: EngineHarnessOptions = {},
): Promise<EngineHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ars-engine-'));
  const nats = await startNatsServer({ storeDir: dir });
  let store: Store | undefined;
  const definition = defineService({
    ...runExecutorService,
    build: async (context) => {
      store = context.store;
      const wrapped = options.wrapStore?.(context.store);
      return runExecutorService.build(wrapped === undefined ? context : { ...context, store: wrapped });
    },
  });
  const bus = await connectBus({ servers: nats.url, name: 'engine-test' });
  const agentConfigs = new Map<string, Record<string, unknown>>();
  const fakes = await serveEngineFakes(bus, agentConfigs);
  const governance = await serveGovernanceFake(bus);
  const persistent = options.persistentStore === true;
  const startExecutor = () =>
    startInProcess(definition, {
      natsUrl: nats.url,
      env: { AGENT_CONFIG_CACHE_MS: '0', ...(persistent ? { DATA_DIR: join(dir, 'data') } : {}), ...env },
      inMemoryStore: !persistent,
    });
  let service = await startExecutor();
  if (store === undefined) throw new Error('the service did not build');
  const tasks = await createTaskRepository(store);
  const call = (method: string, body: Record<string, unknown>, identity: VerifiedIdentity) =>
    service.call(method, { identity: {}, ...body }, identity);
  const watch = (identity: VerifiedIdentity, taskId: string) => watchRun(bus, identity, taskId);
  return {
    nats,
    get service() {
      return service;
    },
    bus,
    store,
    tasks,
    agentConfigs,
    governance,
    call,
    watch,
    async start(identity, body) {
      // The watch reads from the start of the stream, so nothing of the run is missed.
      const result = (await call('start', body, identity)) as { task_id: string };
      return { taskId: result.task_id, watch: await watch(identity, result.task_id) };
    },
    control: (method, taskId, identity, payload, eventId) =>
      call(
        method,
        {
          identity: { run: taskId },
          ...(payload === undefined ? {} : { payload }),
          ...(eventId === undefined ? {} : { event_id: eventId }),
        },
        identity,
      ),
    async restart() {
      if (!persistent) throw new Error('restart needs persistentStore');
      await service.stop();
      service = await startExecutor();
    },
    async stop() {
      await service.stop().catch(() => undefined);
      await Promise.all([...fakes, governance.served].map((f) => f.stop().catch(() => undefined)));
      await bus.close().catch(() => undefined);
      await nats.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The most runs that were running at once, from each run's `task.started`
 * and terminal event sequences: the stream orders every start and end.
 */
export function mostAtOnce(runs: readonly { readonly started: number; readonly ended: number }[]): number {
  const edges = runs.flatMap(({ started, ended }) => [
    { sequence: started, delta: 1 },
    { sequence: ended, delta: -1 },
  ]);
  let running = 0;
  let most = 0;
  for (const { delta } of edges.sort((a, b) => a.sequence - b.sequence)) {
    running += delta;
    most = Math.max(most, running);
  }
  return most;
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VerifiedIdentity } from '@ars/contracts';
import { connectBus, createRpcClient, serveService, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcClient, ServedService } from '@ars/bus';
import { defineService } from '@ars/service-kit';
import type { Environment } from '@ars/service-kit';
import { startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import type { TaskRecord } from '../../src/domain/task.ts';
import type { EffectiveConfigRecord } from '../../src/engine/agent-config.ts';
import { runExecutorService } from '../../src/service.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';
import { startServiceProcesses } from '../helpers/service-processes.ts';
import type { PeerService, ServiceProcesses } from '../helpers/service-processes.ts';
import { serveGovernanceFake, watchRun } from './harness.ts';
import type { GovernanceFake, RunWatch } from './harness.ts';

/**
 * The run-executor (API side and engine) in-process, with the REAL
 * governance, agent-registry, memory and artifact services (whichever the
 * suite names) as processes on the same nats-server, a stand-in session
 * `_session.admit`, and stand-ins of agent-registry and governance when the
 * suite does not name them. Calls go over NATS as a gateway would send them.
 */
export interface SystemHarness {
  readonly nats: NatsServerHandle;
  readonly executor: InProcessService;
  readonly peers: ServiceProcesses;
  readonly bus: Bus;
  readonly rpc: RpcClient;
  readonly tasks: TaskRepository;
  /** Calls a method or internal endpoint of any service (`identity: {}` added to bodies that have none). */
  call(service: string, method: string, body: Record<string, unknown>, identity: VerifiedIdentity): Promise<unknown>;
  start(identity: VerifiedIdentity, body: Record<string, unknown>): Promise<{ taskId: string; watch: RunWatch }>;
  /** Starts a run and waits for its terminal event. */
  run(identity: VerifiedIdentity, body: Record<string, unknown>): Promise<{ taskId: string; watch: RunWatch }>;
  /** The effective configuration recorded on a task. */
  recorded(taskId: string): Promise<EffectiveConfigRecord | undefined>;
  stop(): Promise<void>;
}

/** Starts nats-server, the named peers, the session stand-in and the run-executor (with `env`). */
export async function startSystemHarness(peers: readonly PeerService[], env: Environment = {}): Promise<SystemHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ars-system-'));
  const nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  const bus = await connectBus({ servers: nats.url, name: 'system-test' });
  const rpc = createRpcClient(bus, { timeoutMs: 10_000 });
  const logger = createLogger({ name: 'fakes', level: 'silent' });
  const session: ServedService = await serveService(bus, {
    service: 'session',
    version: '0.0.1',
    instanceId: 'fake-session',
    handlers: { '_session.admit': async () => ({ state: 'open' }) },
    logger,
  });
  // Runs fail closed without their configuration: a suite without the real agent-registry gets a stand-in
  // answering what the registry answers for an agent with no revision (the built-in default).
  const registry: ServedService | undefined = peers.includes('agent-registry')
    ? undefined
    : await serveService(bus, {
        service: 'agent-registry',
        version: '0.0.1',
        instanceId: 'fake-agent-registry',
        handlers: {
          '_agent.resolve': async ({ body }) => ({ agent_id: (body as { agent_id: string }).agent_id, revision_id: null, config: {} }),
          '_agent.effective_config': async ({ body }) => ({
            agent_id: (body as { agent_id: string }).agent_id,
            revision_id: null,
            config: {},
            source_disables: [],
            skills: [],
            layers: [{ layer: 'agent', revision_id: null, applied_keys: [] }],
            content_hash: 'sha256:stand-in',
          }),
        },
        logger,
      });
  // Runs fail closed without governance too: a suite without the real one gets a stand-in admitting every call.
  const governance: GovernanceFake | undefined = peers.includes('governance') ? undefined : await serveGovernanceFake(bus);
  let processes: ServiceProcesses | undefined;
  let executor: InProcessService | undefined;
  const cleanup = async () => {
    await executor?.stop().catch(() => undefined);
    await processes?.stop().catch(() => undefined);
    await session.stop().catch(() => undefined);
    await registry?.stop().catch(() => undefined);
    await governance?.served.stop().catch(() => undefined);
    await bus.close().catch(() => undefined);
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  };
  let store: Store | undefined;
  try {
    processes = await startServiceProcesses(bus, { natsUrl: nats.url, dataDir: dir, names: peers });
    const definition = defineService({
      ...runExecutorService,
      build: async (context) => {
        store = context.store;
        return runExecutorService.build(context);
      },
    });
    executor = await startInProcess(definition, { natsUrl: nats.url, env: { ...env } });
  } catch (error) {
    await cleanup();
    throw error;
  }
  if (store === undefined) throw new Error('the run-executor did not build');
  const tasks = await createTaskRepository(store);
  const call = (service: string, method: string, body: Record<string, unknown>, identity: VerifiedIdentity) =>
    rpc.call(service, method, identity, method.startsWith('_') ? body : { identity: {}, ...body });
  const start = async (identity: VerifiedIdentity, body: Record<string, unknown>) => {
    const result = (await call('run-executor', 'start', body, identity)) as { task_id: string };
    return { taskId: result.task_id, watch: await watchRun(bus, identity, result.task_id) };
  };
  return {
    nats,
    executor,
    peers: processes,
    bus,
    rpc,
    tasks,
    call,
    start,
    async run(identity, body) {
      const started = await start(identity, body);
      await started.watch.terminal(20_000);
      started.watch.stop();
      return started;
    },
    recorded: async (taskId) =>
      ((await tasks.getTask(taskId)) as (TaskRecord & { effective_config?: EffectiveConfigRecord }) | null)
        ?.effective_config,
    stop: cleanup,
  };
}

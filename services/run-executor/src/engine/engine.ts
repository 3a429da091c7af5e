import { watchConfigChanges } from '@ars/bus';
import type { Bus, EventPublisher, RpcClient } from '@ars/bus';
import { createCredentialBrokerClient, startPeriodic } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { LeaseRepository } from '../store/lease.repository.ts';
import type { RunOverridesRepository } from '../store/run-overrides.repository.ts';
import type { RunStateRepository } from '../store/run-state.repository.ts';
import type { TaskConfigRepository } from '../store/task-config.repository.ts';
import type { TaskGroupRepository } from '../store/task-group.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { createArtifactIo } from '../tools/artifact-io.ts';
import { BUILTIN_TOOLS } from '../tools/builtins.ts';
import { createArgsValidators } from '../tools/json-schema-args.ts';
import { createMcpToolHost } from '../tools/mcp-tools.ts';
import { createToolRegistry } from '../tools/registry.ts';
import { createServiceTools } from '../tools/service-tools.ts';
import { createAgentConfigResolver } from './agent-config.ts';
import type { EngineSettings } from './engine-config.ts';
import type { FleetGate } from './fleet-gate.ts';
import { createRunMetrics } from '../metrics/run-metrics.ts';
import { createEventPipeline, createJsPipeline } from './event-pipeline.ts';
import { createStoredEventIds } from './stored-events.ts';
import { createGovernance } from './governance.ts';
import { createAdmissionPosture } from './admission-posture.ts';
import { createInferenceCredentials } from './inference-credentials.ts';
import { OutputModeMemory } from './output-mode-memory.ts';
import { createLeaseManager } from './lease.ts';
import { createMemoryPrompt } from './memory.ts';
import { createRunConsumer } from './run-consumer.ts';
import type { RunConsumer } from './run-consumer.ts';
import { createRun } from './run-loop.ts';
import type { Run } from './run-loop.ts';
import type { FlowRunRepository } from '../flows/flow-run.repository.ts';
import { routingFlowRuns } from '../flows/flow-runs.ts';
import type { RunDeps } from './run-state.ts';
import { createStaleRunSweeper } from './stale-runs.ts';
import { createSpawnGroupTool, settlingGroupOnEnd } from './task-groups.ts';
import { createToolCallReporter } from './tool-call-reporter.ts';
import { createWorkQueue } from './work-queue.ts';

/**
 * The run engine of one executor replica: the RUNS consumers, leases, and
 * the planner loop of every claimed run.
 */

/** What {@link startEngine} needs from the service's context. */
export interface EngineOptions {
  readonly bus: Bus;
  readonly rpc: RpcClient;
  /** Publishes `task.spawned` again for a run the queue lost (see `createStaleRunSweeper`). */
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  readonly instanceId: string;
  readonly tasks: TaskRepository;
  readonly runStates: RunStateRepository;
  readonly groups: TaskGroupRepository;
  readonly runOverrides: RunOverridesRepository;
  readonly taskConfigs: TaskConfigRepository;
  readonly leases: LeaseRepository;
  readonly settings: EngineSettings;
  /** Flow runs: a claimed parent task of kind `flow` is run by the flow driver (`flows/`); absent: none. */
  readonly flowRuns?: FlowRunRepository;
  /** Fleet control of the runs' agents (`fleet-gate.ts`); absent: none. */
  readonly fleet?: FleetGate;
}

export interface Engine {
  /** Runs in flight on this replica. */
  readonly active: number;
  /** Drains (see the run consumer) and releases the engine's subscriptions and timers. */
  stop(): Promise<void>;
}

/** How often a run waiting on a task group reads its members' state, in ms. */
const GROUP_POLL_MS = 100;
/** How often a flow run reads its step's children, in ms. */
const FLOW_POLL_MS = 200;

/** Starts claiming runs. */
export async function startEngine(options: EngineOptions): Promise<Engine> {
  const { bus, settings } = options;
  const logger = options.logger.child({ component: 'engine' });
  await options.runStates.init();
  const queue = createWorkQueue(bus, { ackWaitMs: settings.ackWaitMs });
  await queue.ensureConsumers();
  // The lease manager reports lost leases to the consumer created after it.
  const ref: { consumer?: RunConsumer } = {};
  const js = createJsPipeline(bus, { source: 'run-executor' });
  const leases = createLeaseManager(options.leases, {
    owner: options.instanceId,
    ttlMs: settings.leaseTtlMs,
    onLost: (taskId) => ref.consumer?.leaseLost(taskId),
  });
  const pipeline = createEventPipeline(js, { source: 'run-executor', logger, observer: createRunMetrics() });
  const { rpc } = options;
  const timeoutMs = settings.rpcTimeoutMs;
  const artifacts = createArtifactIo({ bus, rpc, timeoutMs });
  const serviceTools = createServiceTools({
    rpc,
    artifacts,
    timeoutMs,
    readMaxBytes: settings.artifactReadMaxBytes,
    writeMaxBytes: settings.artifactWriteMaxBytes,
  });
  const validators = createArgsValidators({
    onCompileError: (server, tool, error) =>
      logger.warn(
        { err: error, server, tool },
        'MCP tool input schema not compiled; its arguments are checked as an object',
      ),
  });
  const toolCalls = createToolCallReporter({ rpc, logger, timeoutMs });
  const { tasks, runStates, groups, publisher } = options;
  const groupDeps = { bus, publisher, tasks, runStates, groups, pollMs: GROUP_POLL_MS, logger };
  const spawnGroup = createSpawnGroupTool(groupDeps);
  const posture = createAdmissionPosture({
    rpc,
    logger,
    cacheMs: settings.governancePostureCacheMs,
    timeoutMs,
    watch: (onChange) => watchConfigChanges(bus, onChange),
  });
  const deps: RunDeps = {
    bus,
    pipeline,
    publisher,
    storedEvents: createStoredEventIds(bus),
    logger,
    tasks: options.tasks,
    runStates: options.runStates,
    groups,
    tools: createToolRegistry([...BUILTIN_TOOLS, ...serviceTools, spawnGroup], settings.approvalOverrides),
    mcp: createMcpToolHost({
      rpc,
      logger,
      validators,
      callTimeoutMs: settings.mcpCallTimeoutMs,
      rpcTimeoutMs: timeoutMs,
    }),
    toolCalls,
    agents: createAgentConfigResolver({
      rpc,
      logger,
      cacheMs: settings.agentConfigCacheMs,
      timeoutMs,
      watch: (onChange) => watchConfigChanges(bus, onChange),
    }),
    runOverrides: options.runOverrides,
    taskConfigs: options.taskConfigs,
    governance: createGovernance({ rpc, logger, timeoutMs, posture }),
    credentials: createInferenceCredentials({
      client: createCredentialBrokerClient({ service: 'run-executor', ...settings.broker, logger }),
      principal: `run-executor/${options.instanceId}`,
    }),
    memory: createMemoryPrompt({ rpc, logger, timeoutMs }),
    artifacts,
    settings,
    outputModes: new OutputModeMemory(),
    ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
  };
  options.fleet?.onRestart((tenant, agentId) => deps.agents.invalidate?.(tenant, agentId));
  const { flowRuns } = options;
  const flowDeps = flowRuns && { ...groupDeps, flowRuns, storedEvents: deps.storedEvents, pollMs: FLOW_POLL_MS };
  const withFlows = (run: Run): Run => (flowDeps === undefined ? run : routingFlowRuns(run, flowDeps));
  const consumer = createRunConsumer({
    bus,
    queue,
    leases,
    logger,
    concurrency: settings.concurrency,
    ackWaitMs: settings.ackWaitMs,
    leaseTtlMs: settings.leaseTtlMs,
    drainGraceMs: settings.drainGraceMs,
    drainUnsafeCallMs: settings.drainUnsafeCallMs,
    // A group member's end settles a group nobody waits on (task-groups.ts).
    createRun: (taskId, deliveryCount, holdsLease) =>
      settlingGroupOnEnd(withFlows(createRun(taskId, deps, deliveryCount, holdsLease)), groupDeps),
  });
  ref.consumer = consumer;
  consumer.start();
  const sweeper = createStaleRunSweeper({
    deps: { bus, publisher: options.publisher, tasks: options.tasks },
    queue,
    logger,
    staleAfterMs: settings.staleRunMs,
    ...(options.fleet === undefined ? {} : { held: (task) => options.fleet?.isHeld(task) === true }),
  });
  const sweeping = startPeriodic(async () => void (await sweeper.sweep()), {
    name: 'stale-run sweep',
    intervalMs: Math.max(1_000, Math.round(settings.staleRunMs / 4)),
    logger,
  });
  logger.info({ concurrency: settings.concurrency }, 'run engine started');
  return {
    get active() {
      return consumer.active;
    },
    stop: async () => {
      await sweeping.stop();
      await consumer.stop();
      await toolCalls.stop();
      deps.agents.stop?.();
      posture.stop();
      js.close();
    },
  };
}

import { defineService } from '@ars/service-kit';
import { RunExecutorConfig } from './config.ts';
import { apiSettingsOf, createApiHandlers } from './handlers/index.ts';
import { createTaskRepository } from './store/task.repository.ts';
import { startEngine } from './engine/engine.ts';
import { engineSettingsOf } from './engine/engine-config.ts';
import { createRunStateRepository } from './store/run-state.repository.ts';
import { createRunOverridesRepository } from './store/run-overrides.repository.ts';
import { createTaskConfigRepository } from './store/task-config.repository.ts';
import { createErasedSessionRepository } from './store/erased-session.repository.ts';
import { createLeaseRepository } from './store/lease.repository.ts';
import { createTaskGroupRepository } from './store/task-group.repository.ts';
import { cachedFigures, observeExecutor, readConsumers } from './metrics/queue-metrics.ts';
import { createFlowCatalog } from './flows/catalog.ts';
import { createFlowRunRepository } from './flows/flow-run.repository.ts';
import { createFleetGate } from './engine/fleet-gate.ts';
import { createFleetReadHandlers } from './handlers/fleet-reads.handler.ts';

/**
 * The run-executor service: start, the nine steering controls, tasks.*, pause.list, search.tasks and
 * runs.set_overrides and flows.*; runs the planner loop (and the flow driver) on the RUNS work queue.
 */
export const runExecutorService = defineService({
  name: 'run-executor',
  version: '0.1.0',
  config: RunExecutorConfig,
  build: async ({ config, store, bus, rpc, publisher, logger, instanceId, metrics }) => {
    const tasks = await createTaskRepository(store);
    const runStates = createRunStateRepository(store);
    const runOverrides = createRunOverridesRepository(store);
    const taskConfigs = createTaskConfigRepository(store);
    const groups = createTaskGroupRepository(store);
    const flowRuns = await createFlowRunRepository(store);
    const catalog = await createFlowCatalog({
      dir: config.FLOWS_DIR,
      reloadMs: config.FLOWS_RELOAD_MS,
      logger: logger.child({ component: 'flows' }),
    });
    // Fleet control (agents.*): the agents' states from the ars_fleet KV bucket, enforced on start and claims.
    const fleet = createFleetGate({
      bus,
      logger: logger.child({ component: 'fleet' }),
      defaultAgentId: config.DEFAULT_AGENT_ID,
      openPauses: (taskId) => runStates.openPauses(taskId),
    });
    await fleet.start();
    const fleetReads = await createFleetReadHandlers(store, { defaultAgentId: config.DEFAULT_AGENT_ID });
    const api = createApiHandlers(
      {
        tasks,
        bus,
        rpc,
        publisher,
        logger,
        settings: apiSettingsOf(config),
      },
      {
        eraseRunState: async (triple) =>
          (
            await Promise.all([
              runStates.eraseSession(triple),
              runOverrides.eraseSession(triple),
              taskConfigs.eraseSession(triple),
              groups.eraseSession(triple),
              flowRuns.eraseSession(triple),
            ])
          ).reduce((a, b) => a + b, 0),
        runOverrides,
        erasedSessions: createErasedSessionRepository(store),
        flows: { catalog, flowRuns },
        fleet,
      },
    );
    const settings = engineSettingsOf(config);
    const engine = await startEngine({
      bus,
      rpc,
      publisher,
      logger,
      instanceId,
      tasks,
      runStates,
      groups,
      runOverrides,
      taskConfigs,
      leases: createLeaseRepository(store),
      settings,
      fleet,
      flowRuns,
    });
    observeExecutor(metrics, {
      figures: cachedFigures(readConsumers(bus)),
      busy: () => engine.active,
      capacity: settings.concurrency,
    });
    return {
      handlers: api.handlers,
      internalHandlers: [...api.internalHandlers, ...fleetReads],
      stop: async () => {
        // The runs started last are announced before the engine and the bus stop.
        await api.stop();
        await engine.stop();
        await catalog.stop();
        await fleet.stop();
      },
    };
  },
});

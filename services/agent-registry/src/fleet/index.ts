import type { Bus, EventPublisher, RpcClient, RpcHandler } from '@ars/bus';
import type { Store } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import type { AgentLookup } from '../handlers/agent-state.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import type { SkillRepository } from '../store/skill.repository.ts';
import type { ToolCatalogueDeps } from '../tools/tools.handler.ts';
import { createCommandRepository } from './command.repository.ts';
import { createControlHandlers } from './controls.handler.ts';
import { createFleetDependencies } from './dependencies.ts';
import type { FleetDependencies } from './dependencies.ts';
import { openFleetRegistry } from './fleet.kv.ts';
import { startHealthReports } from './health.ts';
import { createReadHandlers } from './reads.handler.ts';
import { createRegistrar } from './registration.ts';
import type { FleetRegistrar } from './registration.ts';

/**
 * The agent fleet of agent-registry: the 13 `agents.*` methods, the
 * registrations in the `ars_fleet` KV bucket (which the run-executors
 * enforce), the command log in the store, and the periodic health reports.
 */
export interface FleetModule {
  readonly handlers: Record<string, RpcHandler>;
  readonly registrar: FleetRegistrar;
  stop(): Promise<void>;
}

export interface FleetModuleDeps {
  readonly store: Store;
  readonly bus: Bus;
  readonly rpc: RpcClient;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  readonly lookup: AgentLookup;
  readonly skills: SkillRepository;
  readonly catalogue: ToolCatalogueDeps;
  readonly healthIntervalMs: number;
  readonly dependencyTimeoutMs: number;
  /** @default the run-executor, memory and governance over NATS */
  readonly dependencies?: FleetDependencies;
}

export async function createFleetModule(deps: FleetModuleDeps): Promise<FleetModule> {
  const logger = deps.logger.child({ component: 'fleet' });
  const [registry, commands] = await Promise.all([openFleetRegistry(deps.bus), createCommandRepository(deps.store)]);
  const dependencies = deps.dependencies ?? createFleetDependencies(deps.rpc, logger, deps.dependencyTimeoutMs);
  const registrar = createRegistrar({ registry, lookup: deps.lookup, publisher: deps.publisher, logger });
  const health = startHealthReports({
    registry,
    dependencies,
    publisher: deps.publisher,
    logger,
    intervalMs: deps.healthIntervalMs,
  });
  return {
    registrar,
    handlers: {
      ...createControlHandlers({
        registry,
        registrar,
        commands,
        lookup: deps.lookup,
        dependencies,
        publisher: deps.publisher,
        logger,
      }),
      ...createReadHandlers({
        registrar,
        lookup: deps.lookup,
        dependencies,
        skills: deps.skills,
        catalogue: deps.catalogue,
        logger,
      }),
    },
    stop: () => health.stop(),
  };
}

/**
 * The admin tier's revisions with fleet registration: every new head
 * revision registers its agent (first revision) or takes its version hash
 * (`FleetRegistrar.revised`), after the write. A registration that fails
 * (the KV bucket not answering) is logged, never the write's failure: the
 * fleet's first read of the agent registers it, and `agents.restart` takes
 * the head's hash.
 */
export function withFleetRegistration(
  revisions: RevisionRepository,
  registrar: () => FleetRegistrar | undefined,
  logger: Logger,
): RevisionRepository {
  return {
    ...revisions,
    async append(revision) {
      const outcome = await revisions.append(revision);
      const fleet = registrar();
      if (!('kind' in outcome) && fleet !== undefined) {
        const by = { tenant: outcome.tenant, user: outcome.author.user, session: outcome.author.session };
        await fleet.revised(outcome.tenant, outcome.agent_id, by).catch((error: unknown) => {
          logger.warn({ err: error, agentId: outcome.agent_id }, 'fleet registration of a revision failed');
        });
      }
      return outcome;
    },
  };
}

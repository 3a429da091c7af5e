import type { z } from 'zod';
import { SERVICE_NAMES } from '@ars/contracts';
import type { ServiceName } from '@ars/contracts';
import type { Bus, EventPublisher, RpcClient, RpcHandler } from '@ars/bus';
import type { Store } from '@ars/store';
import type { Logger, Metrics, Telemetry } from '@ars/telemetry';
import type { BaseServiceConfig } from './config.ts';
import type { InternalHandler } from './internal-handler.ts';

/**
 * Everything a service's `build` receives, already connected. The kit owns
 * these: it closes the store and the bus and shuts telemetry down on stop.
 */
export interface ServiceContext<C extends BaseServiceConfig = BaseServiceConfig> {
  /** The frozen config read once by `loadConfig`. */
  readonly config: Readonly<C>;
  readonly bus: Bus;
  /** The service's own database: `ars_<service>` on MongoDB or embedded under `DATA_DIR/<service>`. */
  readonly store: Store;
  readonly logger: Logger;
  /** Publishes registry-validated events with `source` = the service name. */
  readonly publisher: EventPublisher;
  /** Calls other services over NATS. */
  readonly rpc: RpcClient;
  /** This replica's id (also the services-API instance id). */
  readonly instanceId: string;
  readonly telemetry: Telemetry;
  /** The process's metrics: `metrics.service` is the attribute set every series of the service carries. */
  readonly metrics: Metrics;
}

/** Handlers by registry method name; a method left out answers `unimplemented`. */
export type ServiceHandlers = Partial<Record<string, RpcHandler>>;

/** What `build` returns. */
export interface ServiceImplementation {
  readonly handlers: ServiceHandlers;
  /**
   * Releases what `build` started (consumers, timers). Runs after the service
   * stopped serving and before the store and bus close.
   */
  readonly stop?: () => Promise<void>;
  /**
   * The service's internal endpoints (service to service, never routed by
   * the gateway), each from the internal endpoint registry of
   * `@ars/contracts` and bound with `serveInternal`; served on
   * `ars.rpc.<service>.<name>`. Callers use `callInternal` of `@ars/bus`.
   */
  readonly internalHandlers?: readonly InternalHandler[];
  /** Extra services-API metadata (string values), merged over the kit's own. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A service as `startService`/`runService` boot it. */
export interface ServiceDefinition<S extends z.ZodType<BaseServiceConfig> = z.ZodType<BaseServiceConfig>> {
  /** The owning-service name of the registry; also the services-API name. */
  readonly name: ServiceName;
  /** The build version reported in discovery and health (services API needs semver). */
  readonly version: string;
  /** The service's env schema: `BaseServiceConfig.extend({ … })`. */
  readonly config: S;
  /** Wires the service from its connected context. */
  build(context: ServiceContext<z.output<S>>): Promise<ServiceImplementation>;
}

/**
 * Declares a service. Checks the name against the registry's services at
 * definition time, so a typo fails on import rather than at boot.
 */
export function defineService<S extends z.ZodType<BaseServiceConfig>>(
  definition: ServiceDefinition<S>,
): ServiceDefinition<S> {
  if (!(SERVICE_NAMES as readonly string[]).includes(definition.name)) {
    throw new Error(`unknown service name "${definition.name}"; expected one of ${SERVICE_NAMES.join(', ')}`);
  }
  return Object.freeze({ ...definition });
}

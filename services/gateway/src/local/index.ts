import type { LocalHandler } from './local-handler.ts';
import {
  metricsSnapshotHandler,
  runtimeCountersHandler,
  runtimeDriversHandler,
  topologySnapshotHandler,
} from './fleet.handlers.ts';
import type { FleetContext } from './fleet.handlers.ts';
import { runtimeHealthHandler, runtimeInfoHandler } from './runtime.handlers.ts';
import type { RuntimeContext } from './runtime.handlers.ts';

export type { LocalHandler, LocalRequest } from './local-handler.ts';
export { HttpCounters } from './http-counters.ts';
export { gatewayEndpoints, unimplemented } from './method-table.ts';
export type { GatewayEndpoint } from './method-table.ts';
export { CAPABILITY_METHODS, createCapabilitySource, deriveCapabilities, implementedMethods } from './capabilities.ts';

/** The gateway-owned methods built so far; the registry's other gateway methods answer 501. */
export const LOCAL_METHODS = [
  'runtime.info',
  'runtime.health',
  'runtime.counters',
  'runtime.drivers',
  'metrics.snapshot',
  'topology.snapshot',
] as const;

/** Builds the handlers of {@link LOCAL_METHODS}. */
export function createLocalHandlers(context: RuntimeContext & FleetContext): Readonly<Record<string, LocalHandler>> {
  return {
    'runtime.info': runtimeInfoHandler(context),
    'runtime.health': runtimeHealthHandler(context),
    'runtime.counters': runtimeCountersHandler(context),
    'runtime.drivers': runtimeDriversHandler(context),
    'metrics.snapshot': metricsSnapshotHandler(context),
    'topology.snapshot': topologySnapshotHandler(context),
  };
}

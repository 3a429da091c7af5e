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
import { eventsAggregateHandler, eventsListHandler, eventsSubscribeHandler } from './events.handlers.ts';
import type { EventsContext } from './events.handlers.ts';
import { searchEventsHandler } from './search-events.handler.ts';

export type { LocalHandler, LocalRequest } from './local-handler.ts';
export { HttpCounters } from './http-counters.ts';
export { gatewayEndpoints, unimplemented } from './method-table.ts';
export type { GatewayEndpoint } from './method-table.ts';
export { CAPABILITY_METHODS, createCapabilitySource, deriveCapabilities, implementedMethods } from './capabilities.ts';
export type { EventsContext } from './events.handlers.ts';

/** The gateway-owned methods built so far; the registry's other gateway methods answer 501. */
export const LOCAL_METHODS = [
  'runtime.info',
  'runtime.health',
  'runtime.counters',
  'runtime.drivers',
  'metrics.snapshot',
  'topology.snapshot',
  'events.subscribe',
  'events.list',
  'events.aggregate',
  'search.events',
] as const;

/** Builds the handlers of {@link LOCAL_METHODS}. */
export function createLocalHandlers(
  context: RuntimeContext & FleetContext & EventsContext,
): Readonly<Record<string, LocalHandler>> {
  return {
    'runtime.info': runtimeInfoHandler(context),
    'runtime.health': runtimeHealthHandler(context),
    'runtime.counters': runtimeCountersHandler(context),
    'runtime.drivers': runtimeDriversHandler(context),
    'metrics.snapshot': metricsSnapshotHandler(context),
    'topology.snapshot': topologySnapshotHandler(context),
    'events.subscribe': eventsSubscribeHandler(),
    'events.list': eventsListHandler(context),
    'events.aggregate': eventsAggregateHandler(context),
    'search.events': searchEventsHandler(context),
  };
}

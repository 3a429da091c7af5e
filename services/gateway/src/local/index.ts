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
import { searchQueryHandler } from './search-query.handler.ts';
import type { SearchQueryContext } from './search-query.handler.ts';

export type { LocalHandler, LocalRequest } from './local-handler.ts';
export { HttpCounters } from './http-counters.ts';
export { gatewayEndpoints, unimplemented } from './method-table.ts';
export type { GatewayEndpoint } from './method-table.ts';
export { CAPABILITY_METHODS, createCapabilitySource, deriveCapabilities, implementedMethods } from './capabilities.ts';
export type { EventsContext } from './events.handlers.ts';

/** The gateway-owned methods built so far; any other gateway method of the registry answers 501. */
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
  'search.query',
] as const;

/** Builds the handlers of {@link LOCAL_METHODS}. */
export function createLocalHandlers(
  context: RuntimeContext & FleetContext & EventsContext & Omit<SearchQueryContext, 'searchEvents'>,
): Readonly<Record<string, LocalHandler>> {
  const searchEvents = searchEventsHandler(context);
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
    'search.events': searchEvents,
    'search.query': searchQueryHandler({ ...context, searchEvents }),
  };
}

import { canFanIn } from '@ars/auth';
import { getMethod } from '@ars/contracts';
import type { DiscoveredInstance, Discovery, EndpointStats, InstanceStats } from '../ports.ts';
import type { HttpCounters } from './http-counters.ts';
import type { LocalHandler, LocalRequest } from './local-handler.ts';

/** What the fleet reads need. */
export interface FleetContext {
  readonly discovery: Discovery;
  readonly counters: HttpCounters;
  readonly instanceId: string;
  /** Wall clock for `taken_at`. */
  readonly clock: () => Date;
}

const NANOS_PER_MS = 1_000_000;

/**
 * True when the caller holds the method's claim for crossing the tenant axis
 * (the spec's cross-tenant table: admin or console:fleet for runtime.* and
 * metrics.snapshot, admin for topology.snapshot): it sees the whole fleet's
 * figures. Without it the caller sees its own tenant's figures only; the
 * services' `$SRV.STATS` and the fleet's instances have no tenant in them,
 * so none of them is its own.
 */
function seesFleet({ method, identity }: LocalRequest): boolean {
  return canFanIn(identity.scopes, getMethod(method)?.crossing?.tenant ?? 'admin');
}

/** Endpoint names are method names with `.` → `-` (the services API allows no dots). */
function endpointMethod(endpoint: { name: string; metadata?: Readonly<Record<string, string>> | null }): string {
  return endpoint.metadata?.method ?? endpoint.name.replaceAll('-', '.');
}

function byName<T extends { name: string; id: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

function isTimestamp(value: string | undefined): value is string {
  return value !== undefined && /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(value);
}

function endpointCounters(endpoint: EndpointStats) {
  return {
    method: endpointMethod(endpoint),
    num_requests: endpoint.num_requests,
    num_errors: endpoint.num_errors,
    processing_time_ns: Math.round(endpoint.processing_time),
    average_processing_time_ns: Math.round(endpoint.average_processing_time),
    ...(endpoint.last_error ? { last_error: endpoint.last_error } : {}),
  };
}

/**
 * runtime.counters: `$SRV.STATS` per service instance and method, plus the
 * gateway's own HTTP counters (member `gateway`). Without the claim (see
 * `seesFleet`): no service rows, and the HTTP counters of the caller's tenant.
 */
export function runtimeCountersHandler(context: FleetContext): LocalHandler {
  return async (request) => {
    const fleet = seesFleet(request);
    const stats = fleet ? await context.discovery.stats() : [];
    const http = context.counters.snapshot(fleet ? undefined : request.identity.tenant);
    return {
      taken_at: context.clock().toISOString(),
      services: byName(stats).map((instance) => ({
        service: instance.name,
        instance_id: instance.id,
        version: instance.version,
        ...(isTimestamp(instance.started) ? { started_at: instance.started } : {}),
        endpoints: instance.endpoints.map(endpointCounters),
      })),
      gateway: { instance_id: context.instanceId, http },
    };
  };
}

function addTo(target: Record<string, number>, key: string, value: number): void {
  target[key] = (target[key] ?? 0) + value;
}

function rpcFigures(stats: readonly InstanceStats[]) {
  const counters: Record<string, number> = { 'rpc.requests': 0, 'rpc.errors': 0 };
  const gauges: Record<string, number> = { 'services.instances': stats.length };
  for (const instance of stats) {
    addTo(gauges, `services.${instance.name}.instances`, 1);
    for (const endpoint of instance.endpoints) {
      addTo(counters, 'rpc.requests', endpoint.num_requests);
      addTo(counters, 'rpc.errors', endpoint.num_errors);
      addTo(counters, `rpc.${instance.name}.requests`, endpoint.num_requests);
      addTo(counters, `rpc.${instance.name}.errors`, endpoint.num_errors);
      addTo(counters, `rpc.${instance.name}.processing_time_ms`, endpoint.processing_time / NANOS_PER_MS);
    }
  }
  return { counters, gauges };
}

/**
 * metrics.snapshot: named monotonic counters (the gateway's HTTP totals and
 * `$SRV.STATS` summed per service) and gauges (live instances), runtime-wide.
 * Without the claim (see `seesFleet`): the HTTP counters of the caller's
 * tenant, and no fleet counters or gauges.
 */
export function metricsSnapshotHandler(context: FleetContext): LocalHandler {
  return async (request) => {
    const fleet = seesFleet(request);
    const http = context.counters.snapshot(fleet ? undefined : request.identity.tenant);
    const rpc = fleet ? rpcFigures(await context.discovery.stats()) : { counters: {}, gauges: {} };
    return {
      taken_at: context.clock().toISOString(),
      counters: {
        'http.requests': http.requests,
        'http.responses_4xx': http.responses_4xx,
        'http.responses_5xx': http.responses_5xx,
        ...rpc.counters,
      },
      gauges: rpc.gauges,
    };
  };
}

function metadataOf(instance: DiscoveredInstance): Readonly<Record<string, string>> {
  return instance.metadata ?? {};
}

/** A driver row of runtime.drivers. */
interface DriverRow {
  kind: string;
  name: string;
  service?: string;
  details?: Record<string, unknown>;
}

function collectDrivers(instances: readonly DiscoveredInstance[]): DriverRow[] {
  const rows = new Map<string, DriverRow & { instances: string[] }>();
  const add = (kind: string, name: string, instance: DiscoveredInstance) => {
    const key = `${kind}\u0000${name}\u0000${instance.name}`;
    const row = rows.get(key) ?? { kind, name, service: instance.name, instances: [] };
    row.instances.push(instance.id);
    rows.set(key, row);
  };
  for (const instance of instances) {
    const metadata = metadataOf(instance);
    if (metadata.store_kind) add('store', metadata.store_kind, instance);
    if (metadata.blob_driver) add('blob', metadata.blob_driver, instance);
    for (const provider of (metadata.llm_providers ?? '').split(',')) {
      if (provider.trim() !== '') add('llm', provider.trim(), instance);
    }
  }
  return [...rows.values()].map(({ instances: ids, ...row }) => ({ ...row, details: { instances: ids } }));
}

/**
 * runtime.drivers: the bus, and from services-API metadata the store kind of
 * every service (`store_kind`), the artifact blob driver (`blob_driver`) and
 * the LLM providers (`llm_providers`, comma-separated).
 */
export function runtimeDriversHandler(context: FleetContext): LocalHandler {
  return async () => {
    const instances = byName(await context.discovery.info());
    const drivers: DriverRow[] = [{ kind: 'bus', name: 'nats', service: 'gateway' }, ...collectDrivers(instances)];
    return { drivers };
  };
}

/**
 * topology.snapshot: services, their instances, versions and endpoints from
 * `$SRV.INFO`. Without admin (see `seesFleet`) no instance is the caller's
 * tenant's own: no services.
 */
export function topologySnapshotHandler(context: FleetContext): LocalHandler {
  return async (request) => {
    const instances = seesFleet(request) ? await context.discovery.info() : [];
    return topologyProjection(instances, context.clock());
  };
}

/** The topology projection of discovered instances (topology.snapshot's answer, topology.changed's Projection). */
export function topologyProjection(discovered: readonly DiscoveredInstance[], takenAt: Date) {
  const instances = byName(discovered);
  const names = [...new Set(instances.map((instance) => instance.name))];
  return {
    taken_at: takenAt.toISOString(),
    services: names.map((service) => ({
      service,
      instances: instances
        .filter((instance) => instance.name === service)
        .map((instance) => ({
          instance_id: instance.id,
          version: instance.version,
          endpoints: instance.endpoints.map(endpointMethod),
          unimplemented: instance.endpoints
            .filter((endpoint) => endpoint.metadata?.implemented === 'false')
            .map(endpointMethod),
          metadata: { ...metadataOf(instance) },
        })),
    })),
  };
}

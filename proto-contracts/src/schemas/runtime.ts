import { z } from 'zod';
import { JsonObject, ProtocolVersion, Timestamp, record, versioned } from './common.ts';

/** Capability strings the spec names; a runtime advertises only live surfaces. */
export const CAPABILITIES = [
  'caller_memory',
  'events_subscribe',
  'runtime_posture',
  'task_control',
  'topology_snapshot',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** runtime.info: exactly the eight members of the Versioning section. */
export const RuntimeInfo = z
  .strictObject({
    instance_id: z.string(),
    display_name: z.string(),
    build_version: z.string().describe('runtime release version; moves independently; do not pin'),
    build_commit: z.string(),
    build_go_version: z.string(),
    protocol_version: ProtocolVersion,
    capabilities: z.array(z.string()).describe('advertised live surfaces'),
    uptime_seconds: z.int().nonnegative(),
  })
  .describe('RuntimeInfo');
export type RuntimeInfo = z.infer<typeof RuntimeInfo>;

/** Health values of the runtime and of each service. */
export const HealthStatus = z.enum(['ok', 'degraded', 'down']);
export type HealthStatus = z.infer<typeof HealthStatus>;

/** runtime.health: the runtime's health and every service's, from service discovery. */
export const RuntimeHealth = versioned({
  status: HealthStatus,
  checked_at: Timestamp,
  services: z.array(
    record({
      service: z.string(),
      status: HealthStatus,
      instances: z.int().nonnegative(),
      versions: z.array(z.string()).optional(),
    }),
  ),
});
export type RuntimeHealth = z.infer<typeof RuntimeHealth>;

/** Request counters of one method on one service instance (NATS services STATS). */
export const EndpointCounters = record({
  method: z.string(),
  num_requests: z.int().nonnegative(),
  num_errors: z.int().nonnegative(),
  processing_time_ns: z.int().nonnegative(),
  average_processing_time_ns: z.int().nonnegative(),
});
export type EndpointCounters = z.infer<typeof EndpointCounters>;

/** runtime.counters: per service instance, per method. */
export const RuntimeCounters = versioned({
  taken_at: Timestamp,
  services: z.array(
    record({
      service: z.string(),
      instance_id: z.string(),
      version: z.string().optional(),
      started_at: Timestamp.optional(),
      endpoints: z.array(EndpointCounters),
    }),
  ),
});
export type RuntimeCounters = z.infer<typeof RuntimeCounters>;

/** One driver in use: store, blob, bus, llm provider, … */
export const DriverInfo = record({
  kind: z.string().describe('store | blob | bus | llm | …'),
  name: z.string().describe('e.g. embedded, mongodb, jetstream-object-store, nats, scripted, openai'),
  service: z.string().optional().describe('the service using it'),
  capabilities: z.array(z.string()).optional().describe('e.g. presign'),
  details: JsonObject.optional(),
});
export type DriverInfo = z.infer<typeof DriverInfo>;

/** runtime.drivers. */
export const RuntimeDrivers = versioned({ drivers: z.array(DriverInfo) });
export type RuntimeDrivers = z.infer<typeof RuntimeDrivers>;

/** metrics.snapshot: named counters (monotonic) and gauges (current values). */
export const MetricsSnapshot = versioned({
  taken_at: Timestamp,
  tenant: z.string().optional().describe('the tenant the figures are scoped to; absent for runtime-wide'),
  counters: z.record(z.string(), z.number()).describe('e.g. runs_started, runs_completed, events_published'),
  gauges: z.record(z.string(), z.number()).describe('e.g. runs_active, runs_paused, sse_subscribers'),
});
export type MetricsSnapshot = z.infer<typeof MetricsSnapshot>;

/** One instance of a service in the topology. */
export const ServiceInstance = record({
  instance_id: z.string(),
  version: z.string(),
  started_at: Timestamp.optional(),
  endpoints: z.array(z.string()).describe('method names it serves'),
  metadata: z.record(z.string(), z.string()).optional(),
});
export type ServiceInstance = z.infer<typeof ServiceInstance>;

/** topology.snapshot: the services and their instances, from NATS service discovery. */
export const TopologyProjection = versioned({
  taken_at: Timestamp,
  services: z.array(record({ service: z.string(), instances: z.array(ServiceInstance) })),
  bus: record({
    servers: z.array(z.string()).optional(),
    jetstream: z.boolean().optional(),
    cluster: z.string().optional(),
  }).optional(),
});
export type TopologyProjection = z.infer<typeof TopologyProjection>;

import { PROTOCOL_VERSION, SERVICE_NAMES } from '@ars/contracts';
import type { BuildInfo, BusState, DiscoveredInstance, Discovery, ServiceHealthReport } from '../ports.ts';
import type { LocalHandler } from './local-handler.ts';

/** What runtime.info and runtime.health need. */
export interface RuntimeContext {
  readonly build: BuildInfo;
  readonly bus: BusState;
  readonly discovery: Discovery;
  readonly capabilities: { current(): Promise<string[]> };
  /** Wall clock for `checked_at`. */
  readonly clock: () => Date;
  /** Milliseconds clock; uptime is measured from `startedAt`. */
  readonly now: () => number;
  readonly startedAt: number;
}

function uptimeSeconds(context: RuntimeContext): number {
  return Math.max(0, Math.floor((context.now() - context.startedAt) / 1000));
}

/** runtime.info: exactly the eight members of the Versioning section. */
export function runtimeInfoHandler(context: RuntimeContext): LocalHandler {
  return async () => ({
    instance_id: context.build.instanceId,
    display_name: context.build.displayName,
    build_version: context.build.buildVersion,
    build_commit: context.build.buildCommit,
    build_go_version: context.build.runtimeVersion,
    protocol_version: PROTOCOL_VERSION,
    capabilities: await context.capabilities.current(),
    uptime_seconds: uptimeSeconds(context),
  });
}

/** One row of runtime.health. */
export interface ServiceHealthRow {
  readonly service: string;
  readonly status: 'ok' | 'degraded' | 'down';
  /** Live instances seen by `$SRV.INFO`. */
  readonly instances: number;
  /** Versions the live instances report. */
  readonly versions?: readonly string[];
  /** The instance that answered `_health`. */
  readonly instance_id?: string;
  readonly checks?: Readonly<Record<string, string>>;
  readonly uptime_seconds?: number;
  readonly error?: string;
}

async function serviceRow(
  discovery: Discovery,
  service: string,
  live: readonly DiscoveredInstance[],
): Promise<ServiceHealthRow> {
  const versions = [...new Set(live.map((instance) => instance.version))].sort();
  let report: ServiceHealthReport;
  try {
    report = await discovery.health(service);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { service, status: 'down', instances: live.length, versions, error: reason };
  }
  return {
    service,
    status: report.status === 'ok' ? 'ok' : 'degraded',
    instances: Math.max(live.length, 1),
    versions: versions.length > 0 ? versions : [report.version],
    instance_id: report.instance_id,
    checks: report.checks,
    uptime_seconds: report.uptime_seconds,
  };
}

/**
 * runtime.health: asks every service's `_health` and checks NATS. Overall
 * `down` when NATS is unreachable, `degraded` when any service is not `ok`
 * (including one that no instance answers for), else `ok`.
 */
export function runtimeHealthHandler(context: RuntimeContext): LocalHandler {
  return async () => {
    const natsUp = context.bus.isConnected();
    const gateway: ServiceHealthRow = {
      service: 'gateway',
      status: natsUp ? 'ok' : 'degraded',
      instances: 1,
      versions: [context.build.buildVersion],
      instance_id: context.build.instanceId,
      checks: { nats: natsUp ? 'ok' : 'failed' },
      uptime_seconds: uptimeSeconds(context),
    };
    if (!natsUp) {
      const rows = SERVICE_NAMES.filter((name) => name !== 'gateway').map((service): ServiceHealthRow => ({
        service,
        status: 'down',
        instances: 0,
        error: 'NATS is not connected',
      }));
      return {
        status: 'down',
        checked_at: context.clock().toISOString(),
        nats: 'failed',
        services: [gateway, ...rows],
      };
    }
    const instances = await context.discovery.info().catch(() => []);
    const names = new Set<string>(SERVICE_NAMES);
    for (const instance of instances) names.add(instance.name);
    names.delete('gateway');
    const rows = await Promise.all(
      [...names].sort().map((service) =>
        serviceRow(
          context.discovery,
          service,
          instances.filter((instance) => instance.name === service),
        ),
      ),
    );
    const status = rows.every((row) => row.status === 'ok') ? 'ok' : 'degraded';
    return { status, checked_at: context.clock().toISOString(), nats: 'ok', services: [gateway, ...rows] };
  };
}

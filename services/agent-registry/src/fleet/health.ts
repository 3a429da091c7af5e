import type { EventPublisher } from '@ars/bus';
import { startPeriodic } from '@ars/service-kit';
import type { PeriodicJob } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { FleetDependencies } from './dependencies.ts';
import type { FleetRegistry } from './fleet.kv.ts';
import { healthOf } from './fleet-state.ts';
import { fleetIdentity } from './registration.ts';

/** Options of {@link startHealthReports}. */
export interface HealthReportDeps {
  readonly registry: FleetRegistry;
  readonly dependencies: FleetDependencies;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  readonly intervalMs: number;
}

/**
 * One health pass: one call to the run-executor for the runs ended in the
 * last interval (by tenant and agent), then, for each registered agent that
 * had any, its health from their outcomes written to its registration and
 * reported as `agent.health`. An agent without ended runs is not reported
 * (its health stays what it was), so an idle fleet costs one call per
 * interval. Replicas of agent-registry each run the pass; the event id
 * names the interval, so the stream keeps one report per agent and interval.
 */
export async function reportHealth(deps: HealthReportDeps, nowMs = Date.now()): Promise<number> {
  const windowStart = Math.floor(nowMs / deps.intervalMs) * deps.intervalMs - deps.intervalMs;
  const outcomes = await deps.dependencies.outcomes(new Date(windowStart).toISOString());
  let reported = 0;
  for (const o of outcomes) {
    const stored = await deps.registry.get(o.tenant, o.agent_id);
    if (stored === null || stored.entry.state === 'deregistered') continue;
    const health = healthOf(o, stored.entry.health);
    const reportedAt = new Date(nowMs).toISOString();
    // One try: a registration changed meanwhile keeps its own health; the next pass reports again.
    await deps.registry.update({ ...stored.entry, health, last_reported_at: reportedAt }, stored.revision);
    await deps.publisher.publish({
      type: 'agent.health',
      identity: fleetIdentity(o.tenant),
      eventId: `agent.health:${o.tenant}:${o.agent_id}:${windowStart}`,
      occurredAt: reportedAt,
      payload: { AgentID: o.agent_id, Health: health, ReportedAt: nowMs },
    });
    reported += 1;
  }
  return reported;
}

/** Runs {@link reportHealth} every interval. */
export function startHealthReports(deps: HealthReportDeps): PeriodicJob {
  return startPeriodic(async () => void (await reportHealth(deps)), {
    name: 'fleet health',
    intervalMs: deps.intervalMs,
    logger: deps.logger,
  });
}

import type { EventFrame } from '@ars/client';

/**
 * The fleet across tenants as the event stream tells it: agents.list reads
 * one tenant only, so the console:fleet view folds the agent.* events of every
 * tenant (the stream's cross-tenant fan-in) into one row per (tenant, agent).
 */

/** The agent.* event types that change a registration's state, health or incarnation. */
export const FLEET_EVENT_TYPES = [
  'agent.registered',
  'agent.restarted',
  'agent.deregistered',
  'agent.health',
  'agent.drained',
  'agent.force_stopped',
  'agent.paused',
  'agent.restart_requested',
] as const;

/** One agent of one tenant, as last reported on the stream. */
export interface FleetRow {
  readonly tenant: string;
  readonly agentId: string;
  /** running | draining | paused | stopped | deregistered */
  readonly state: string;
  /** unknown until an agent.health event says otherwise. */
  readonly health: string;
  readonly incarnation?: number;
  readonly lastEvent: string;
  readonly lastAt: string;
  readonly sequence: number;
}

/** The state each event leaves an agent in; absent: the event does not change the state. */
const STATE_AFTER: Readonly<Record<string, string>> = {
  'agent.registered': 'running',
  'agent.restarted': 'running',
  'agent.deregistered': 'deregistered',
  'agent.drained': 'draining',
  'agent.force_stopped': 'stopped',
  'agent.paused': 'paused',
};

/** The key of a row: tenant and agent id. */
export function fleetKey(tenant: string, agentId: string): string {
  return JSON.stringify([tenant, agentId]);
}

/**
 * Applies one frame to the fleet (keyed by {@link fleetKey}); answers the same
 * map when the frame is not a fleet event or is not newer than the row.
 */
export function applyFleetFrame(
  fleet: ReadonlyMap<string, FleetRow>,
  frame: EventFrame,
): ReadonlyMap<string, FleetRow> {
  if (!(FLEET_EVENT_TYPES as readonly string[]).includes(frame.type)) return fleet;
  const agentId = frame.payload.AgentID;
  if (typeof agentId !== 'string' || agentId === '') return fleet;
  const key = fleetKey(frame.tenant, agentId);
  const previous = fleet.get(key);
  if (previous !== undefined && previous.sequence >= frame.sequence) return fleet;
  const incarnation = typeof frame.payload.Incarnation === 'number' ? frame.payload.Incarnation : previous?.incarnation;
  const health =
    frame.type === 'agent.health' && typeof frame.payload.Health === 'string' ? frame.payload.Health : previous?.health;
  const row: FleetRow = {
    tenant: frame.tenant,
    agentId,
    state: STATE_AFTER[frame.type] ?? previous?.state ?? 'running',
    health: health ?? 'unknown',
    ...(incarnation === undefined ? {} : { incarnation }),
    lastEvent: frame.type,
    lastAt: frame.occurred_at,
    sequence: frame.sequence,
  };
  const next = new Map(fleet);
  next.set(key, row);
  return next;
}

/** The rows by tenant, then agent id. */
export function fleetRows(fleet: ReadonlyMap<string, FleetRow>): FleetRow[] {
  return [...fleet.values()].sort((a, b) => a.tenant.localeCompare(b.tenant) || a.agentId.localeCompare(b.agentId));
}

/** How many distinct tenants the rows span. */
export function tenantCount(rows: readonly FleetRow[]): number {
  return new Set(rows.map((row) => row.tenant)).size;
}

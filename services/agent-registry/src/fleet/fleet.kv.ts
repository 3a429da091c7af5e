import { decodeToken, encodeToken, FLEET_BUCKET, openKv } from '@ars/bus';
import type { Bus, KV } from '@ars/bus';
import { FLEET_AGENT_KEY_PREFIX, FleetEntry, ServiceError } from '@ars/contracts';

/** A registration read with the KV revision that a compare-and-set names. */
export interface StoredEntry {
  readonly entry: FleetEntry;
  readonly revision: number;
}

/**
 * The fleet registrations in the `ars_fleet` KV bucket, one key per agent
 * of a tenant. Every write is a compare-and-set on the key's revision (or a
 * create), so that two replicas of agent-registry never lose each other's
 * change: the loser reads again and re-applies its change.
 */
export interface FleetRegistry {
  get(tenant: string, agentId: string): Promise<StoredEntry | null>;
  /** Creates the key; null when it exists already (another writer came first). */
  create(entry: FleetEntry): Promise<StoredEntry | null>;
  /** Replaces the value read at `revision`; null when it changed since. */
  update(entry: FleetEntry, revision: number): Promise<StoredEntry | null>;
  /** Every registration of the tenant (deregistered ones included), by agent id. */
  list(tenant: string): Promise<FleetEntry[]>;
  /** Every registration of every tenant (the health pass). */
  all(): Promise<FleetEntry[]>;
  /** Every tenant with a registration (deregistered ones included), sorted; from the keys alone. */
  tenants(): Promise<string[]>;
}

/** The KV key of an agent of a tenant (identity tokens, as in event subjects). */
export function fleetKey(tenant: string, agentId: string): string {
  return `${FLEET_AGENT_KEY_PREFIX}.${encodeToken(tenant)}.${encodeToken(agentId)}`;
}

function unavailable(error: unknown): ServiceError {
  return new ServiceError('unavailable', 'the fleet registry (JetStream KV) did not answer; retry', {
    cause: error,
    retryable: true,
  });
}

/** A JetStream "wrong last sequence" refusal of a create or update: another writer came first. */
function isRevisionConflict(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code ?? '')}` : '';
  return /wrong last sequence|10071|key exists/i.test(text);
}

function parse(bytes: string): FleetEntry | undefined {
  try {
    const parsed = FleetEntry.safeParse(JSON.parse(bytes));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function collect(kv: KV, filter: string): Promise<FleetEntry[]> {
  const keys: string[] = [];
  for await (const key of await kv.keys(filter)) keys.push(key);
  const entries = await Promise.all(keys.map((key) => kv.get(key)));
  const out: FleetEntry[] = [];
  for (const entry of entries) {
    if (entry === null || entry.operation !== 'PUT') continue;
    const parsed = parse(entry.string());
    if (parsed !== undefined) out.push(parsed);
  }
  return out.sort((a, b) => byCodeUnits(a.agent_id, b.agent_id));
}

/** The distinct tenants of the registration keys `agent.<tenant token>.<agent token>`, sorted. */
async function tenantsOf(kv: KV): Promise<string[]> {
  const tenants = new Set<string>();
  for await (const key of await kv.keys(`${FLEET_AGENT_KEY_PREFIX}.*.*`)) {
    const token = key.split('.')[1];
    if (token === undefined) continue;
    try {
      tenants.add(decodeToken(token));
    } catch {
      // Not a key this registry writes: skipped like an unparsable value.
    }
  }
  return [...tenants].sort(byCodeUnits);
}

/** Plain code-unit order (not locale order): the order of the cursor of agents.list. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Opens the bucket (created by `ensureInfrastructure` at boot). */
export async function openFleetRegistry(bus: Bus): Promise<FleetRegistry> {
  const kv = await openKv(bus, FLEET_BUCKET);
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw unavailable(error);
    }
  };
  return {
    get: (tenant, agentId) =>
      guard(async () => {
        const found = await kv.get(fleetKey(tenant, agentId));
        if (found === null || found.operation !== 'PUT') return null;
        const entry = parse(found.string());
        return entry === undefined ? null : { entry, revision: found.revision };
      }),
    create: (entry) =>
      guard(async () => {
        try {
          const revision = await kv.create(fleetKey(entry.tenant, entry.agent_id), JSON.stringify(entry));
          return { entry, revision };
        } catch (error) {
          if (isRevisionConflict(error)) return null;
          throw error;
        }
      }),
    update: (entry, revision) =>
      guard(async () => {
        try {
          const next = await kv.update(fleetKey(entry.tenant, entry.agent_id), JSON.stringify(entry), revision);
          return { entry, revision: next };
        } catch (error) {
          if (isRevisionConflict(error)) return null;
          throw error;
        }
      }),
    list: (tenant) => guard(() => collect(kv, `${FLEET_AGENT_KEY_PREFIX}.${encodeToken(tenant)}.*`)),
    all: () => guard(() => collect(kv, `${FLEET_AGENT_KEY_PREFIX}.>`)),
    tenants: () => guard(() => tenantsOf(kv)),
  };
}

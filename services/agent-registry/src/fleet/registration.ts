import { randomUUID } from 'node:crypto';
import type { EventPublisher } from '@ars/bus';
import type { FleetEntry, VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup, LiveAgent } from '../handlers/agent-state.ts';
import { byCodeUnits } from './fleet.kv.ts';
import type { FleetRegistry, StoredEntry } from './fleet.kv.ts';

/** Where every registered agent's runs execute: the shared run-executors. */
export const HOSTING = 'run-executor';

/** Most agent ids of a tenant one `agents.list` registers on the way. */
export const MAX_TENANT_AGENTS = 500;

/** The identity fleet events are published under: the acting caller's, or the fleet's own in the agent's tenant. */
export interface EventIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** The fleet's own identity in a tenant (registration found at boot or by the health pass). */
export function fleetIdentity(tenant: string): EventIdentity {
  return { tenant, user: 'agent-registry', session: '_fleet' };
}

export function identityOf(caller: VerifiedIdentity): EventIdentity {
  return { tenant: caller.tenant, user: caller.user, session: caller.session };
}

/**
 * Registration: an agent configuration (tenant, agent id) is registered in
 * the fleet when its first revision is written, or, for an agent that
 * existed before (and the default agent, which runs on its built-in
 * configuration without one), when the fleet first reads it. A registration
 * gets a random key, incarnation 0, the head revision's content hash as its
 * version hash, hosting `run-executor`, and publishes `agent.registered`.
 * A later revision changes the version hash; a deregistered agent is
 * registered again (a new key, incarnation 0) by its next revision only.
 */
export interface FleetRegistrar {
  /** The agent's registration, registering a live agent that has none; null when it is not in the fleet. */
  ensure(tenant: string, agentId: string, by: EventIdentity): Promise<StoredEntry | null>;
  /** Every registration of the tenant not deregistered, registering its live agents that have none; by agent id. */
  listTenant(tenant: string, by: EventIdentity): Promise<FleetEntry[]>;
  /** Every tenant with a registration in the fleet, sorted (the cross-tenant agents.list). */
  tenants(): Promise<string[]>;
  /** A new head revision of an agent (admin tier): register it, or take its version hash. */
  revised(tenant: string, agentId: string, by: EventIdentity): Promise<void>;
}

export interface RegistrarDeps {
  readonly registry: FleetRegistry;
  readonly lookup: AgentLookup;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
}

/** Lost compare-and-set races a registration write retries. */
const MAX_ATTEMPTS = 8;

function newEntry(tenant: string, agent: LiveAgent, now: string): FleetEntry {
  return {
    tenant,
    agent_id: agent.agent_id,
    registration_key: randomUUID(),
    incarnation: 0,
    version_hash: agent.content_hash,
    started_version_hash: agent.content_hash,
    revision_id: agent.revision_id,
    hosting: HOSTING,
    health: 'unknown',
    state: 'running',
    registered_at: now,
    changed_at: now,
  };
}

export function createRegistrar(deps: RegistrarDeps): FleetRegistrar {
  const { registry, publisher } = deps;

  const publishRegistered = (entry: FleetEntry, by: EventIdentity) =>
    publisher.publish({
      type: 'agent.registered',
      identity: by,
      eventId: `agent.registered:${entry.registration_key}`,
      occurredAt: entry.registered_at,
      payload: {
        AgentID: entry.agent_id,
        RegistrationKey: entry.registration_key,
        Incarnation: entry.incarnation,
        VersionHash: entry.version_hash,
        Hosting: entry.hosting,
        RegisteredAt: Date.parse(entry.registered_at),
      },
    });

  async function register(tenant: string, agent: LiveAgent, by: EventIdentity): Promise<StoredEntry | null> {
    const created = await registry.create(newEntry(tenant, agent, new Date().toISOString()));
    if (created === null) return registry.get(tenant, agent.agent_id);
    await publishRegistered(created.entry, by);
    deps.logger.info({ tenant, agentId: agent.agent_id }, 'agent registered in the fleet');
    return created;
  }

  async function ensure(tenant: string, agentId: string, by: EventIdentity): Promise<StoredEntry | null> {
    const stored = await registry.get(tenant, agentId);
    if (stored !== null) return stored.entry.state === 'deregistered' ? null : stored;
    const agent = await liveAgent(deps.lookup, tenant, agentId);
    if (agent === null) return null;
    const registered = await register(tenant, agent, by);
    return registered === null || registered.entry.state === 'deregistered' ? null : registered;
  }

  async function revised(tenant: string, agentId: string, by: EventIdentity): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const [stored, agent] = await Promise.all([
        registry.get(tenant, agentId),
        liveAgent(deps.lookup, tenant, agentId),
      ]);
      if (agent === null) return;
      if (stored === null) {
        if ((await register(tenant, agent, by)) !== null) return;
        continue;
      }
      const { entry } = stored;
      if (entry.state === 'deregistered') {
        const again = { ...newEntry(tenant, agent, new Date().toISOString()), health: entry.health };
        const updated = await registry.update(again, stored.revision);
        if (updated === null) continue;
        await publishRegistered(again, by);
        return;
      }
      if (entry.version_hash === agent.content_hash && entry.revision_id === agent.revision_id) return;
      const next = { ...entry, version_hash: agent.content_hash, revision_id: agent.revision_id };
      if ((await registry.update(next, stored.revision)) !== null) return;
    }
    deps.logger.warn({ tenant, agentId }, 'fleet registration not updated after repeated concurrent writes');
  }

  return {
    ensure,
    revised,
    async listTenant(tenant, by) {
      const [ids, entries] = await Promise.all([
        deps.lookup.revisions.agentIds(tenant, MAX_TENANT_AGENTS),
        registry.list(tenant),
      ]);
      const known = new Set(entries.map((e) => e.agent_id));
      const missing = [...new Set([...ids, deps.lookup.defaultAgentId])].filter((id) => !known.has(id));
      const added = await Promise.all(missing.map((id) => ensure(tenant, id, by)));
      const all = [...entries, ...added.flatMap((s) => (s === null ? [] : [s.entry]))];
      return all.filter((e) => e.state !== 'deregistered').sort((a, b) => byCodeUnits(a.agent_id, b.agent_id));
    },
    tenants: () => registry.tenants(),
  };
}

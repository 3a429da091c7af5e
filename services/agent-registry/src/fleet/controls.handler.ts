import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentControlRequest, ServiceError } from '@ars/contracts';
import type { AgentCommand, AgentControlResponse, FleetEntry, VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { reconcileIdentity, requireAdmin, typedMethod } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup } from '../handlers/agent-state.ts';
import type { CommandRecord, CommandRepository } from './command.repository.ts';
import { commandRecordId } from './command.repository.ts';
import type { FleetDependencies } from './dependencies.ts';
import type { FleetRegistry, StoredEntry } from './fleet.kv.ts';
import { transition } from './fleet-state.ts';
import type { FleetRegistrar } from './registration.ts';
import { identityOf } from './registration.ts';

/** What the five fleet-control handlers need. */
export interface ControlDeps {
  readonly registry: FleetRegistry;
  readonly registrar: FleetRegistrar;
  readonly commands: CommandRepository;
  readonly lookup: AgentLookup;
  readonly dependencies: FleetDependencies;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
}

/** The event each verb publishes when it changes the agent (restart: `agent.restart_requested`, then `agent.restarted`). */
const COMMAND_EVENTS: Readonly<Record<Exclude<AgentCommand, 'deregister'>, string>> = {
  drain: 'agent.drained',
  pause: 'agent.paused',
  force_stop: 'agent.force_stopped',
  restart: 'agent.restart_requested',
};

/** Lost compare-and-set races one command retries before answering `conflict`. */
const MAX_ATTEMPTS = 8;
/** How long a repeat waits for the first call of its command id to finish. */
const REPLAY_WAIT_MS = 3_000;
/** A command id claimed this long ago without a response was abandoned by a call that died; a repeat finishes it. */
const ABANDONED_CLAIM_MS = 30_000;

function notRegistered(agentId: string): ServiceError {
  return new ServiceError('not_found', `agent ${agentId} is not registered in the fleet`);
}

/** The response of a repeated command id: the first call's, once it has one. */
async function replay(
  deps: ControlDeps,
  existing: CommandRecord,
  command: AgentCommand,
  agentId: string,
  caller: VerifiedIdentity,
): Promise<AgentControlResponse> {
  if (existing.command !== command || existing.agent_id !== agentId) {
    throw new ServiceError(
      'conflict',
      `command_id ${existing.command_id} was issued for agents.${existing.command} of agent ${existing.agent_id}`,
    );
  }
  const deadline = Date.now() + REPLAY_WAIT_MS;
  let record: CommandRecord | null = existing;
  while (record !== null && record.response === undefined && Date.now() < deadline) {
    await sleep(50);
    record = await deps.commands.get(existing.tenant, existing.command_id);
  }
  if (record?.response !== undefined) return record.response;
  if (record !== null && Date.now() - Date.parse(record.issued_at) > ABANDONED_CLAIM_MS) {
    // The first call died while applying it: this one finishes it (see `apply`: an entry already changed by it counts).
    const response = await apply(deps, { ...applyingOf(record), caller });
    await deps.commands.complete(record.tenant, record.command_id, response);
    return response;
  }
  throw new ServiceError('conflict', `command ${existing.command_id} is still being applied; retry`, {
    retryable: true,
  });
}

function applyingOf(record: CommandRecord): Omit<Applying, 'caller'> {
  return {
    command: record.command,
    commandId: record.command_id,
    reason: record.reason,
    force: record.force,
    agentId: record.agent_id,
    issuedAt: record.issued_at,
  };
}

interface Applying {
  readonly command: AgentCommand;
  readonly commandId: string;
  readonly reason: string;
  readonly force: boolean;
  readonly caller: VerifiedIdentity;
  readonly agentId: string;
  readonly issuedAt: string;
}

async function inFlightOf(deps: ControlDeps, a: Applying): Promise<number> {
  if (a.command !== 'deregister') return 0;
  const [counts] = await deps.dependencies.runCounts(a.caller, a.caller.tenant, [a.agentId]);
  return (counts?.pending ?? 0) + (counts?.running ?? 0);
}

/** Applies the command to the registration (compare-and-set, retried on a lost race). */
async function apply(deps: ControlDeps, a: Applying): Promise<AgentControlResponse> {
  const tenant = a.caller.tenant;
  const by = identityOf(a.caller);
  const base = { agent_id: a.agentId, command: a.command, issued_at: a.issuedAt, command_id: a.commandId };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const stored = await deps.registrar.ensure(tenant, a.agentId, by);
    if (stored === null) throw notRegistered(a.agentId);
    if (stored.entry.command_id === a.commandId) {
      // Applied already, by a call of this command id that did not record its response.
      return { ...base, accepted: true, state: stored.entry.state, incarnation: stored.entry.incarnation };
    }
    const [live, inFlight] = await Promise.all([
      a.command === 'restart' ? liveAgent(deps.lookup, tenant, a.agentId) : Promise.resolve(null),
      inFlightOf(deps, a),
    ]);
    const step = transition(stored.entry, {
      command: a.command,
      commandId: a.commandId,
      reason: a.reason,
      force: a.force,
      inFlight,
      now: a.issuedAt,
      versionHash: live?.content_hash ?? stored.entry.version_hash,
      revisionId: live === null ? stored.entry.revision_id : live.revision_id,
    });
    if (step.kind === 'refused') throw new ServiceError('conflict', step.message);
    if (step.kind === 'noop') {
      return { ...base, accepted: false, state: stored.entry.state, incarnation: stored.entry.incarnation };
    }
    if (a.command === 'restart') await publishCommand(deps, a, by);
    const updated = await deps.registry.update(step.next, stored.revision);
    if (updated === null) continue;
    await publishOutcome(deps, a, stored, updated.entry, by);
    deps.logger.info(
      { tenant, agentId: a.agentId, command: a.command, commandId: a.commandId, state: updated.entry.state },
      'fleet command applied',
    );
    return { ...base, accepted: true, state: updated.entry.state, incarnation: updated.entry.incarnation };
  }
  throw new ServiceError('conflict', `agent ${a.agentId} is being changed concurrently; retry`, { retryable: true });
}

function publishCommand(deps: ControlDeps, a: Applying, by: ReturnType<typeof identityOf>) {
  const type = COMMAND_EVENTS[a.command as Exclude<AgentCommand, 'deregister'>];
  return deps.publisher.publish({
    type,
    identity: by,
    eventId: `${type}:${a.caller.tenant}:${a.commandId}`,
    occurredAt: a.issuedAt,
    payload: { AgentID: a.agentId, Command: a.command, Reason: a.reason, IssuedAt: Date.parse(a.issuedAt) },
  });
}

async function publishOutcome(
  deps: ControlDeps,
  a: Applying,
  before: StoredEntry,
  after: FleetEntry,
  by: ReturnType<typeof identityOf>,
): Promise<void> {
  const eventId = (type: string) => `${type}:${a.caller.tenant}:${a.commandId}`;
  if (a.command === 'restart') {
    await deps.publisher.publish({
      type: 'agent.restarted',
      identity: by,
      eventId: eventId('agent.restarted'),
      payload: {
        AgentID: a.agentId,
        RegistrationKey: after.registration_key,
        Incarnation: after.incarnation,
        VersionHash: after.version_hash,
        VersionHashChanged: after.version_hash !== before.entry.started_version_hash,
        RestartedAt: Date.parse(after.changed_at),
      },
    });
    return;
  }
  if (a.command === 'deregister') {
    await deps.publisher.publish({
      type: 'agent.deregistered',
      identity: by,
      eventId: eventId('agent.deregistered'),
      payload: {
        AgentID: a.agentId,
        RegistrationKey: after.registration_key,
        DeregisteredAt: Date.parse(after.changed_at),
      },
    });
    return;
  }
  await publishCommand(deps, a, by);
}

/**
 * One fleet-control verb (admin, M and A): idempotent by `command_id` in the
 * tenant (the first call claims the id in the store; a repeat answers its
 * response, `accepted` as the first had it), audited by that record (who,
 * when, why) and by the agent.* event it publishes, and applied to the
 * agent's registration in the fleet KV bucket, which every run-executor
 * enforces. A refused transition is 409 `conflict` and frees the id.
 */
export function createControlHandler(command: AgentCommand, deps: ControlDeps): RpcHandler {
  return typedMethod(AgentControlRequest, async ({ method, identity, body }) => {
    requireAdmin(method, identity);
    reconcileIdentity(method, identity, body.identity);
    if (body.force !== undefined && command !== 'deregister') {
      throw new ServiceError('invalid_request', `force: ${method} takes no force (agents.deregister only)`);
    }
    const tenant = identity.tenant;
    const commandId = body.command_id ?? randomUUID();
    const issuedAt = new Date().toISOString();
    const reason = body.reason ?? '';
    const force = body.force === true;
    const record: CommandRecord = {
      _id: commandRecordId(tenant, commandId),
      tenant,
      command_id: commandId,
      agent_id: body.agent_id,
      command,
      reason,
      force,
      issued_by: { user: identity.user, session: identity.session },
      issued_at: issuedAt,
    };
    const claim = await deps.commands.claim(record);
    if (!claim.claimed) return replay(deps, claim.existing, command, body.agent_id, identity);
    try {
      const response = await apply(deps, {
        command,
        commandId,
        reason,
        force,
        caller: identity,
        agentId: body.agent_id,
        issuedAt,
      });
      await deps.commands.complete(tenant, commandId, response);
      return response;
    } catch (error) {
      await deps.commands.release(tenant, commandId).catch((e: unknown) => {
        deps.logger.warn({ err: e, commandId }, 'refused fleet command not released');
      });
      throw error;
    }
  });
}

/** The five fleet-control verbs. */
export function createControlHandlers(deps: ControlDeps): Record<string, RpcHandler> {
  const verbs: AgentCommand[] = ['deregister', 'drain', 'force_stop', 'pause', 'restart'];
  return Object.fromEntries(verbs.map((verb) => [`agents.${verb}`, createControlHandler(verb, deps)]));
}

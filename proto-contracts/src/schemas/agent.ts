import { z } from 'zod';
import { Timestamp, record } from './common.ts';

/** Fleet commands of agents.* control verbs. */
export const AGENT_COMMANDS = ['deregister', 'drain', 'force_stop', 'pause', 'restart'] as const;
export const AgentCommand = z.enum(AGENT_COMMANDS);
export type AgentCommand = z.infer<typeof AgentCommand>;

/**
 * The states of a registered agent. `running`: starts and claims as usual;
 * `draining`: `start` refused (409 `conflict`), queued and in-flight runs
 * finish; `paused`: starts queue but are not claimed, in-flight runs park at
 * their next step boundary; `stopped` (force_stop): starts refused, queued
 * runs not claimed, in-flight runs hard-cancelled; `deregistered`: out of
 * the fleet (starts refused, runs cancelled) until a new configuration
 * revision registers it again. `agents.restart` returns any state but
 * `deregistered` to `running`.
 */
export const AGENT_STATES = ['running', 'draining', 'paused', 'stopped', 'deregistered'] as const;
export const AgentState = z.enum(AGENT_STATES);
export type AgentState = z.infer<typeof AgentState>;

/** Health an agent reports (`agent.health`): from its runs' outcomes over the last window; `unknown` before any. */
export const AGENT_HEALTHS = ['unknown', 'healthy', 'degraded', 'failing'] as const;
export type AgentHealth = (typeof AGENT_HEALTHS)[number];

/** A registered agent of the fleet. */
export const Agent = record({
  tenant: z
    .string()
    .describe('added member: the tenant the agent is registered in (agents.list can fan in across tenants)'),
  agent_id: z.string(),
  registration_key: z.string(),
  incarnation: z.int().nonnegative(),
  version_hash: z.string().describe('sha256: of the head configuration revision'),
  hosting: z.string().describe('where its runs execute: `run-executor` (the shared executors)'),
  health: z.string().describe('unknown | healthy | degraded | failing'),
  state: z.string().describe('running | draining | paused | stopped'),
  registered_at: Timestamp,
  last_reported_at: Timestamp.optional(),
  revision_id: z.string().optional().describe('the head revision (absent: the built-in default configuration)'),
  runs_in_flight: z.int().nonnegative().optional().describe('its runs claimed and not ended (running or parked)'),
  runs_queued: z.int().nonnegative().optional().describe('its runs started and not claimed yet'),
});
export type Agent = z.infer<typeof Agent>;

/** A permission an agent holds. */
export const AgentPermission = record({ resource: z.string(), actions: z.array(z.string()) });
export type AgentPermission = z.infer<typeof AgentPermission>;

/**
 * One agent's fleet registration as stored in the `ars_fleet` KV bucket
 * (key `agent.<tenant token>.<agent token>`, identity tokens as in event
 * subjects). agent-registry writes it (registration, revisions, fleet
 * control, health); every run-executor watches the bucket and enforces
 * `state` on `start` and on its claims, without a call per run.
 */
export const FleetEntry = z.looseObject({
  tenant: z.string().min(1),
  agent_id: z.string().min(1),
  registration_key: z.string().min(1),
  incarnation: z.int().nonnegative(),
  version_hash: z.string(),
  /** The version hash the current incarnation began with (`agent.restarted` VersionHashChanged compares to it). */
  started_version_hash: z.string(),
  revision_id: z.string().nullable(),
  hosting: z.string(),
  health: z.string(),
  state: AgentState,
  registered_at: Timestamp,
  last_reported_at: Timestamp.optional(),
  /** When `state` (or the incarnation) last changed, ISO 8601. */
  changed_at: Timestamp,
  /** The command that made the last change, and its reason (the executors' control event ids derive from it). */
  command_id: z.string().optional(),
  reason: z.string().optional(),
});
export type FleetEntry = z.infer<typeof FleetEntry>;

/** KV key prefix of agent registrations in the fleet bucket. */
export const FLEET_AGENT_KEY_PREFIX = 'agent';

/** Reason prefix of the run pauses fleet control opens (`agents.pause`); resuming the agent resumes only these. */
export const FLEET_PAUSE_REASON = 'agent paused by fleet control';

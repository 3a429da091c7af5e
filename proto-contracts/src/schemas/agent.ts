import { z } from 'zod';
import { Timestamp, record } from './common.ts';

/** Fleet commands of agents.* control verbs. */
export const AGENT_COMMANDS = ['deregister', 'drain', 'force_stop', 'pause', 'restart'] as const;
export const AgentCommand = z.enum(AGENT_COMMANDS);
export type AgentCommand = z.infer<typeof AgentCommand>;

/** A registered agent of the fleet. */
export const Agent = record({
  agent_id: z.string(),
  registration_key: z.string(),
  incarnation: z.int().nonnegative(),
  version_hash: z.string(),
  hosting: z.string(),
  health: z.string(),
  state: z.string().describe('running | draining | paused | stopped'),
  registered_at: Timestamp,
  last_reported_at: Timestamp.optional(),
});
export type Agent = z.infer<typeof Agent>;

/** A permission an agent holds. */
export const AgentPermission = record({ resource: z.string(), actions: z.array(z.string()) });
export type AgentPermission = z.infer<typeof AgentPermission>;

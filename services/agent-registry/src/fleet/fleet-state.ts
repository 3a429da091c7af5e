import type { AgentCommand, AgentHealth, AgentState, FleetEntry } from '@ars/contracts';

/**
 * The fleet's state machine, pure: what a control verb does to an agent's
 * registration, and the health its runs' outcomes give it.
 *
 * | from \ verb   | drain    | pause  | force_stop | restart          | deregister              |
 * |---------------|----------|--------|------------|------------------|-------------------------|
 * | running       | draining | paused | stopped    | running, inc + 1 | deregistered (1)        |
 * | draining      | no-op    | paused | stopped    | running, inc + 1 | deregistered (1)        |
 * | paused        | refused  | no-op  | stopped    | running, inc + 1 | deregistered (1)        |
 * | stopped       | refused  | refused| no-op      | running, inc + 1 | deregistered (1)        |
 *
 * (1) refused while runs are in flight unless forced. A no-op is answered
 * `accepted: false` and changes nothing; a refusal is 409 `conflict`.
 */

/** What a verb does to a registration. */
export type Transition =
  | { readonly kind: 'change'; readonly next: FleetEntry }
  | { readonly kind: 'noop' }
  | { readonly kind: 'refused'; readonly message: string };

/** A command as the state machine sees it. */
export interface CommandInput {
  readonly command: AgentCommand;
  readonly commandId: string;
  readonly reason: string;
  readonly force: boolean;
  /** The agent's runs claimed and not ended (deregister only). */
  readonly inFlight: number;
  /** ISO 8601. */
  readonly now: string;
  /** The version hash of the head revision now (restart reloads it). */
  readonly versionHash: string;
  readonly revisionId: string | null;
}

const TARGET: Readonly<Record<Exclude<AgentCommand, 'restart'>, AgentState>> = {
  drain: 'draining',
  pause: 'paused',
  force_stop: 'stopped',
  deregister: 'deregistered',
};

/** States a verb is refused from (besides `deregistered`, refused for all: the agent is not in the fleet). */
const REFUSED_FROM: Readonly<Record<AgentCommand, readonly AgentState[]>> = {
  drain: ['paused', 'stopped'],
  pause: ['stopped'],
  force_stop: [],
  restart: [],
  deregister: [],
};

/** The registration after `input`, or why not. */
export function transition(entry: FleetEntry, input: CommandInput): Transition {
  const { command } = input;
  if (entry.state === 'deregistered') {
    return { kind: 'refused', message: `agent ${entry.agent_id} is deregistered` };
  }
  if (REFUSED_FROM[command].includes(entry.state)) {
    return {
      kind: 'refused',
      message: `agent ${entry.agent_id} is ${entry.state}: ${command} needs agents.restart first`,
    };
  }
  const stamp = { changed_at: input.now, command_id: input.commandId, reason: input.reason };
  if (command === 'restart') {
    return {
      kind: 'change',
      next: {
        ...entry,
        ...stamp,
        state: 'running',
        incarnation: entry.incarnation + 1,
        version_hash: input.versionHash,
        started_version_hash: input.versionHash,
        revision_id: input.revisionId,
      },
    };
  }
  if (command === 'deregister' && input.inFlight > 0 && !input.force) {
    return {
      kind: 'refused',
      message: `agent ${entry.agent_id} has ${input.inFlight} run(s) in flight: drain it first, or deregister with force`,
    };
  }
  const target = TARGET[command];
  if (entry.state === target) return { kind: 'noop' };
  return { kind: 'change', next: { ...entry, ...stamp, state: target } };
}

/** Outcomes of an agent's runs ended in one health window. */
export interface OutcomeCounts {
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: number;
}

/** Share of failed runs from which an agent is `degraded`, and `failing`. */
export const DEGRADED_FAILURE_SHARE = 0.1;
export const FAILING_FAILURE_SHARE = 0.5;

/**
 * The health of an agent from its runs ended in the window: `failing` when
 * at least half failed, `degraded` from a tenth, else `healthy`; cancelled
 * runs are the caller's choice and count for neither. No ended run: unchanged.
 */
export function healthOf(outcomes: OutcomeCounts, previous: string): AgentHealth | string {
  const judged = outcomes.completed + outcomes.failed;
  if (judged === 0) return outcomes.cancelled > 0 && previous === 'unknown' ? 'healthy' : previous;
  const share = outcomes.failed / judged;
  if (share >= FAILING_FAILURE_SHARE) return 'failing';
  if (share >= DEGRADED_FAILURE_SHARE) return 'degraded';
  return 'healthy';
}

import { isServiceError, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResolvedArtifact } from '../domain/start.ts';

/** The other services' internal endpoints that `start` asks. */
export const SESSION_ADMIT = { service: 'session', endpoint: '_session.admit' } as const;
export const AGENT_RESOLVE = { service: 'agent-registry', endpoint: '_agent.resolve' } as const;
export const ARTIFACT_RESOLVE = { service: 'artifact', endpoint: '_artifact.resolve' } as const;

/** The pauses between two asks of a dependency that had no responders: 50 ms, doubling, at most 500 ms. */
const FIRST_PAUSE_MS = 50;
const LONGEST_PAUSE_MS = 500;

/** The checks of `start` that other services answer. */
export interface StartDependencies {
  /**
   * Opens, reopens or touches the session; throws `session_erased` for an
   * erased one. `turn` (the new task and its query) lets the session record
   * the turn without reading the task back. `reuseMs`: how long the session
   * service lets this answer be reused (absent: not at all).
   */
  admitSession(caller: VerifiedIdentity, turn?: { task_id: string; query: string }): Promise<{ reuseMs?: number }>;
  /** The head revision of an agent of the caller's tenant; `invalid_request` when it has none. */
  resolveAgent(caller: VerifiedIdentity, agentId: string): Promise<{ revision_id?: string }>;
  /** What the artifact service says of the input artifacts; `invalid_request` naming one the caller may not read. */
  resolveArtifacts(caller: VerifiedIdentity, artifactIds: readonly string[]): Promise<ResolvedArtifact[]>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Calls the other services for `start`; every check fails closed. A
 * dependency with no responders (restarting, or its subscriptions still
 * propagating after a NATS node failover) is asked again, with a growing
 * pause, for as long as the call's budget (`timeoutMs`) lasts; then the
 * start fails 503 `unavailable`. No check is ever skipped. A timeout or a
 * refusal fails the start at once.
 */
export function createStartDependencies(rpc: RpcClient, logger: Logger, timeoutMs: number): StartDependencies {
  async function callWithinBudget(
    target: { service: string; endpoint: string },
    caller: VerifiedIdentity,
    body: unknown,
  ): Promise<unknown> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await rpc.call(target.service, target.endpoint, caller, body, {
          timeoutMs: Math.max(1, deadline - Date.now()),
        });
      } catch (error) {
        const pause = Math.min(FIRST_PAUSE_MS * 2 ** attempt, LONGEST_PAUSE_MS);
        const again = isServiceError(error) && error.code === 'unavailable' && Date.now() + pause < deadline;
        if (!again) throw error;
        if (attempt === 0) logger.warn({ service: target.service, endpoint: target.endpoint }, 'dependency not answering; asking again');
        await sleep(pause);
      }
    }
  }

  return {
    async admitSession(caller, turn) {
      const result = await callWithinBudget(SESSION_ADMIT, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        ...(turn === undefined ? {} : { turn }),
      });
      const reuseMs = isRecord(result) ? result.reuse_ms : undefined;
      return typeof reuseMs === 'number' && Number.isFinite(reuseMs) && reuseMs > 0 ? { reuseMs } : {};
    },

    async resolveAgent(caller, agentId) {
      const result = await callWithinBudget(AGENT_RESOLVE, caller, { tenant: caller.tenant, agent_id: agentId });
      const revision = isRecord(result) ? result.revision_id : undefined;
      return typeof revision === 'string' ? { revision_id: revision } : {};
    },

    async resolveArtifacts(caller, artifactIds) {
      const result = await callWithinBudget(ARTIFACT_RESOLVE, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        artifact_ids: artifactIds,
      });
      const artifacts = isRecord(result) ? result.artifacts : undefined;
      if (!Array.isArray(artifacts)) throw new ServiceError('internal', 'malformed _artifact.resolve answer');
      return artifacts.filter(isRecord).map((a) => ({
        artifact_id: String(a.artifact_id),
        ...(typeof a.mime_type === 'string' ? { mime_type: a.mime_type } : {}),
        ...(typeof a.size_bytes === 'number' ? { size_bytes: a.size_bytes } : {}),
      }));
    },
  };
}

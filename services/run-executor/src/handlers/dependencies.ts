import { AGENT_RESOLVE, ARTIFACT_RESOLVE, SESSION_ADMIT } from '@ars/contracts';
import type { InternalEndpointDef, InternalReply, InternalRequest, VerifiedIdentity } from '@ars/contracts';
import { callInternalWithinBudget } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { ResolvedArtifact } from '../domain/start.ts';

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

/**
 * Calls the other services for `start`; every check fails closed. A
 * dependency with no responders (restarting, or its subscriptions still
 * propagating after a NATS node failover) is asked again, with a growing
 * pause, for as long as the call's budget (`timeoutMs`) lasts; then the
 * start fails 503 `unavailable`. No check is ever skipped. A timeout or a
 * refusal fails the start at once.
 */
export function createStartDependencies(rpc: RpcClient, logger: Logger, timeoutMs: number): StartDependencies {
  const callWithinBudget = <E extends InternalEndpointDef>(
    target: E,
    caller: VerifiedIdentity,
    body: InternalRequest<E>,
  ): Promise<InternalReply<E>> =>
    callInternalWithinBudget(rpc, target, caller, body, {
      timeoutMs,
      onWait: () =>
        logger.warn({ service: target.service, endpoint: target.name }, 'dependency not answering; asking again'),
    });

  return {
    async admitSession(caller, turn) {
      const { reuse_ms: reuseMs } = await callWithinBudget(SESSION_ADMIT, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        ...(turn === undefined ? {} : { turn }),
      });
      return reuseMs !== undefined && reuseMs > 0 ? { reuseMs } : {};
    },

    async resolveAgent(caller, agentId) {
      const { revision_id: revision } = await callWithinBudget(AGENT_RESOLVE, caller, {
        tenant: caller.tenant,
        agent_id: agentId,
      });
      return revision === null ? {} : { revision_id: revision };
    },

    async resolveArtifacts(caller, artifactIds) {
      const { artifacts } = await callWithinBudget(ARTIFACT_RESOLVE, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        artifact_ids: [...artifactIds],
      });
      return artifacts.map((a) => ({ artifact_id: a.artifact_id, mime_type: a.mime_type, size_bytes: a.size_bytes }));
    },
  };
}

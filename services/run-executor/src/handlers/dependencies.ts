import { isServiceError, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { ResolvedArtifact } from '../domain/start.ts';

/** The other services' internal endpoints that `start` asks. */
export const SESSION_ADMIT = { service: 'session', endpoint: '_session.admit' } as const;
export const AGENT_RESOLVE = { service: 'agent-registry', endpoint: '_agent.resolve' } as const;
export const ARTIFACT_RESOLVE = { service: 'artifact', endpoint: '_artifact.resolve' } as const;

/** How long a probe of `_health` may take, in ms. */
const HEALTH_PROBE_TIMEOUT_MS = 500;
/** How long a "service up, endpoint missing" finding is trusted before probing again, in ms. */
const MISSING_ENDPOINT_TTL_MS = 30_000;

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
 * Calls the other services for `start`. While a service runs without one of
 * these internal endpoints (it is being built in parallel), its call answers
 * `unavailable` (no responders) although the service is up: that case, and
 * only that one, is told apart by probing the service's `_health`, and the
 * check is skipped with a warning. A service that is down, slow (`timeout`)
 * or refusing still fails the start.
 */
export function createStartDependencies(rpc: RpcClient, logger: Logger, timeoutMs: number): StartDependencies {
  const missingUntil = new Map<string, number>();

  async function endpointMissing(service: string, caller: VerifiedIdentity): Promise<boolean> {
    if ((missingUntil.get(service) ?? 0) > Date.now()) return true;
    try {
      await rpc.call(service, '_health', caller, undefined, { timeoutMs: HEALTH_PROBE_TIMEOUT_MS });
    } catch (error) {
      // Any answer, even a refusal, means the service is up.
      const silent = !isServiceError(error) || error.code === 'unavailable' || error.code === 'timeout';
      if (silent) return false;
    }
    missingUntil.set(service, Date.now() + MISSING_ENDPOINT_TTL_MS);
    return true;
  }

  /** The call's result, or `skipped` when the service is up without the endpoint. */
  async function callTransitional(
    target: { service: string; endpoint: string },
    caller: VerifiedIdentity,
    body: unknown,
  ): Promise<unknown> {
    try {
      return await rpc.call(target.service, target.endpoint, caller, body, { timeoutMs });
    } catch (error) {
      if (isServiceError(error) && error.code === 'unavailable' && (await endpointMissing(target.service, caller))) {
        logger.warn({ service: target.service, endpoint: target.endpoint }, 'internal endpoint missing; check skipped');
        return 'skipped';
      }
      throw error;
    }
  }

  return {
    async admitSession(caller, turn) {
      const result = await callTransitional(SESSION_ADMIT, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        ...(turn === undefined ? {} : { turn }),
      });
      const reuseMs = isRecord(result) ? result.reuse_ms : undefined;
      return typeof reuseMs === 'number' && Number.isFinite(reuseMs) && reuseMs > 0 ? { reuseMs } : {};
    },

    async resolveAgent(caller, agentId) {
      const result = await rpc.call(
        AGENT_RESOLVE.service,
        AGENT_RESOLVE.endpoint,
        caller,
        {
          tenant: caller.tenant,
          agent_id: agentId,
        },
        { timeoutMs },
      );
      const revision = isRecord(result) ? result.revision_id : undefined;
      return typeof revision === 'string' ? { revision_id: revision } : {};
    },

    async resolveArtifacts(caller, artifactIds) {
      const result = await callTransitional(ARTIFACT_RESOLVE, caller, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        artifact_ids: artifactIds,
      });
      if (result === 'skipped') return [];
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

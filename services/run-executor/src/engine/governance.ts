import {
  GOVERNANCE_ADMIT_LLM_CALL,
  GOVERNANCE_FAILOVER,
  GOVERNANCE_PROVIDER_KEY,
  GOVERNANCE_RECORD_COST,
  isServiceError,
  refusalOf,
} from '@ars/contracts';
import type {
  GovernanceRecordCostRequest,
  InternalEndpointDef,
  InternalReply,
  InternalRequest,
  RefusalReason as RefusalOf,
  VerifiedIdentity,
} from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';

/**
 * The engine's side of governance: `_governance.admit_llm_call` before every
 * LLM call, its cost recorded after it (with the next call's admission, or
 * by `_governance.record_cost`), `_governance.failover` on a
 * provider error and `_governance.provider_key` for a provider's key.
 *
 * Governance not running (no responders) or not offering the endpoint
 * (`unimplemented`): runs proceed un-governed — admitted as asked, nothing
 * recorded, no failover, the executor's own key — and one warning is logged
 * per outage. A governance that answered this executor on an endpoint less
 * than {@link GOVERNANCE_ABSENCE_GRACE_MS} ago and has no responders on it now is away
 * for a moment (restarting, its subscriptions coming back after a NATS
 * reconnect), not absent: that `unavailable` is thrown like a timeout, so no
 * call slips through un-governed in the seconds after a restart. A refusal
 * always stops the call ({@link LlmCallRefused}); a timeout or any other
 * failure is thrown (the run is retried later).
 */

/** How long after governance last answered an endpoint a "no responders" on it counts as a moment's absence. */
export const GOVERNANCE_ABSENCE_GRACE_MS = 60_000;

/** Why governance refused a call (the refusals `_governance.admit_llm_call` declares); each is the ErrorCode the run fails with. */
export type RefusalReason = RefusalOf<typeof GOVERNANCE_ADMIT_LLM_CALL>;

/** Governance refused an LLM call: the run fails `failed` with ErrorCode {@link reason}, never retried. */
export class LlmCallRefused extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.name = 'LlmCallRefused';
    this.reason = reason;
  }
}

/** The run a call belongs to (`Identity` of governance's events). */
export interface RunQuad {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run: string;
}

/** An admitted call. */
export interface Admission {
  /** False when governance was not asked (not running). */
  readonly governed: boolean;
  /** The tier applied (absent un-governed). */
  readonly tier?: string | undefined;
  /** Max tokens to ask the provider for: the request, clipped to the tier's cap. */
  readonly maxTokens: number;
  readonly clipped: boolean;
  /** Sleep this long before calling (a rate-limit reservation). */
  readonly waitMs: number;
}

/** One finished LLM call's cost, as recorded with governance. */
export interface CostRecord {
  readonly model: string;
  readonly tier?: string | undefined;
  readonly costUsd: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  /** Idempotency key: `<run>:<step>:<attempt>:<claim>` (see `GovernedCallContext.claim`). */
  readonly callId: string;
}

/** One provider of the tier's failover chain. */
export interface FailoverTarget {
  readonly name: string;
  readonly kind: string;
  readonly base_url?: string | undefined;
  readonly model?: string | undefined;
}

export interface Governance {
  /**
   * Admits a call; with `recordFirst` (the run's previous call, not yet
   * recorded) governance records that cost first, in the same request.
   */
  admit(
    run: RunQuad,
    call: { model: string; requestedMaxTokens: number; tier?: string | undefined; recordFirst?: CostRecord },
  ): Promise<Admission>;
  recordCost(run: RunQuad, call: CostRecord): Promise<void>;
  /** The next provider after `fromProvider`, or null (none left, or governance not running). */
  failover(
    run: RunQuad,
    call: {
      tier?: string | undefined;
      fromProvider: string;
      hopIndex: number;
      accumulatedCost: number;
      reason: string;
    },
  ): Promise<FailoverTarget | null>;
  /** The tenant's key for a provider installation; undefined when none is installed or governance is not running. */
  providerKey(run: RunQuad, provider: string): Promise<string | undefined>;
}

/** Options of {@link createGovernance}. */
export interface GovernanceOptions {
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /** Per call, in ms. */
  readonly timeoutMs: number;
  /** @default {@link GOVERNANCE_ABSENCE_GRACE_MS} */
  readonly absenceGraceMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

function callerOf(run: RunQuad): VerifiedIdentity {
  return { tenant: run.tenant, user: run.user, session: run.session, scopes: [] };
}

export function createGovernance(options: GovernanceOptions): Governance {
  const { rpc, logger, timeoutMs } = options;
  const graceMs = options.absenceGraceMs ?? GOVERNANCE_ABSENCE_GRACE_MS;
  const now = options.now ?? Date.now;
  let absent = false;
  /** When governance last answered each endpoint (a refusal is an answer): a governance without an endpoint never does. */
  const answeredAt = new Map<string, number>();

  /** The answer, or `undefined` when governance is not running; refusals and other failures are thrown. */
  async function ask<E extends InternalEndpointDef>(
    run: RunQuad,
    target: E,
    body: InternalRequest<E>,
  ): Promise<InternalReply<E> | undefined> {
    const endpoint = target.name;
    try {
      const answer = await callInternal(rpc, target, callerOf(run), body, { timeoutMs });
      answeredAt.set(endpoint, now());
      if (absent) logger.info({ endpoint }, 'governance is back; LLM calls are governed again');
      absent = false;
      return answer;
    } catch (error) {
      if (!isServiceError(error)) throw error;
      const lastAnswer = answeredAt.get(endpoint);
      if (error.code === 'unavailable' && lastAnswer !== undefined && now() - lastAnswer < graceMs) {
        // It was here a moment ago: wait for it (the run is retried) rather than call un-governed.
        throw error;
      }
      if (error.code === 'unavailable' || error.code === 'unimplemented') {
        if (!absent)
          logger.warn({ endpoint, code: error.code }, 'governance unavailable; LLM calls proceed un-governed');
        absent = true;
        return undefined;
      }
      const reason = refusalOf(GOVERNANCE_ADMIT_LLM_CALL, error);
      if (reason !== undefined) {
        answeredAt.set(endpoint, now());
        throw new LlmCallRefused(reason, error.message);
      }
      throw error;
    }
  }

  /** The body members of `_governance.record_cost` (also `record_cost` of an admission) but the identity. */
  function costBody(call: CostRecord): Omit<GovernanceRecordCostRequest, 'identity'> {
    return {
      model: call.model,
      ...(call.tier === undefined ? {} : { tier: call.tier }),
      cost_usd: call.costUsd,
      tokens_in: call.tokensIn,
      tokens_out: call.tokensOut,
      call_id: call.callId,
    };
  }

  return {
    async admit(run, call) {
      const answer = await ask(run, GOVERNANCE_ADMIT_LLM_CALL, {
        identity: run,
        model: call.model,
        ...(call.tier === undefined ? {} : { tier: call.tier }),
        requested_max_tokens: call.requestedMaxTokens,
        ...(call.recordFirst === undefined ? {} : { record_cost: costBody(call.recordFirst) }),
      });
      if (answer === undefined)
        return { governed: false, maxTokens: call.requestedMaxTokens, clipped: false, waitMs: 0 };
      return {
        governed: true,
        tier: answer.tier,
        maxTokens: answer.max_tokens,
        clipped: answer.clipped,
        waitMs: answer.wait_ms,
      };
    },

    async recordCost(run, call) {
      await ask(run, GOVERNANCE_RECORD_COST, { identity: run, ...costBody(call) });
    },

    async failover(run, call) {
      const answer = await ask(run, GOVERNANCE_FAILOVER, {
        identity: run,
        ...(call.tier === undefined ? {} : { tier: call.tier }),
        from_provider: call.fromProvider,
        hop_index: call.hopIndex,
        accumulated_cost: call.accumulatedCost,
        reason: call.reason.slice(0, 1024),
      });
      return answer?.provider ?? null;
    },

    async providerKey(run, provider) {
      try {
        const answer = await ask(run, GOVERNANCE_PROVIDER_KEY, { tenant: run.tenant, provider });
        return answer?.key;
      } catch (error) {
        if (refusalOf(GOVERNANCE_PROVIDER_KEY, error) === 'no_key') return undefined;
        throw error;
      }
    },
  };
}

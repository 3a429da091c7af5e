import {
  GOVERNANCE_ADMIT_LLM_CALL,
  GOVERNANCE_FAILOVER,
  GOVERNANCE_PROVIDER_KEY,
  GOVERNANCE_RECORD_COST,
  GOVERNANCE_RECORD_COSTS,
  isServiceError,
  MAX_RECORDED_COSTS,
  refusalOf,
  ServiceError,
} from '@ars/contracts';
import type {
  GovernanceRecordCostRequest,
  InternalEndpointDef,
  InternalReply,
  InternalRequest,
  RefusalReason as RefusalOf,
  VerifiedIdentity,
} from '@ars/contracts';
import { callInternalWithinBudget } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { AdmissionPosture } from './admission-posture.ts';

/**
 * The engine's side of governance: `_governance.admit_llm_call` before every
 * LLM call, its cost recorded after it (with the next call's admission, or
 * by `_governance.record_cost` / `_governance.record_costs`),
 * `_governance.failover` on a provider error and `_governance.provider_key`
 * for a provider's key. A call in a tier that admits every call (no models
 * list, budget, cap or rate limit, as `admission-posture.ts` keeps it) is
 * admitted without asking ({@link Governance.admitOpen}).
 *
 * Governance fails closed: a call governance does not admit is not made.
 * No responders (governance restarting, not running, or its subscriptions
 * still propagating after a NATS node failover) is asked again within the
 * call's budget (`timeoutMs`), then thrown `unavailable`; a governance that
 * does not offer the endpoint (`unimplemented`) is thrown `unavailable` too.
 * The run loop takes `unavailable`, like a timeout, as transient: the run is
 * handed back and retried later. One warning is logged per outage. A
 * refusal always stops the call ({@link LlmCallRefused}).
 */

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
  /** The tier applied. */
  readonly tier: string;
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
  /**
   * Admits a call without asking governance when its tier admits every
   * call (the max tokens as requested, no wait); undefined when governance
   * must decide ({@link admit}). Absent: every call asks.
   */
  admitOpen?(
    run: RunQuad,
    call: { model: string; requestedMaxTokens: number; tier?: string | undefined },
  ): Promise<Admission | undefined>;
  recordCost(run: RunQuad, call: CostRecord): Promise<void>;
  /** Records several calls' costs of the run (`_governance.record_costs`, a request per 100). */
  recordCosts(run: RunQuad, calls: readonly CostRecord[]): Promise<void>;
  /** The next provider after `fromProvider`, or null when the tier's chain has none left. */
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
  /** The tenant's key for a provider installation; undefined when none is installed. */
  providerKey(run: RunQuad, provider: string): Promise<string | undefined>;
}

/** Options of {@link createGovernance}. */
export interface GovernanceOptions {
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /** Each call's budget, asks again of a governance with no responders included, in ms. */
  readonly timeoutMs: number;
  /** Which tiers admit every call (absent: every call asks governance). */
  readonly posture?: AdmissionPosture;
}

function callerOf(run: RunQuad): VerifiedIdentity {
  return { tenant: run.tenant, user: run.user, session: run.session, scopes: [] };
}

export function createGovernance(options: GovernanceOptions): Governance {
  const { rpc, logger, timeoutMs, posture } = options;
  let away = false;

  /** The answer; refusals and every failure are thrown, governance not answering as `unavailable`. */
  async function ask<E extends InternalEndpointDef>(
    run: RunQuad,
    target: E,
    body: InternalRequest<E>,
  ): Promise<InternalReply<E>> {
    const endpoint = target.name;
    try {
      const answer = await callInternalWithinBudget(rpc, target, callerOf(run), body, { timeoutMs });
      if (away) logger.info({ endpoint }, 'governance answers again; LLM calls resume');
      away = false;
      return answer;
    } catch (error) {
      if (!isServiceError(error)) throw error;
      const reason = refusalOf(GOVERNANCE_ADMIT_LLM_CALL, error);
      if (reason !== undefined) throw new LlmCallRefused(reason, error.message);
      if (error.code !== 'unavailable' && error.code !== 'unimplemented') throw error;
      if (!away) logger.warn({ endpoint, code: error.code }, 'governance not answering; LLM calls wait for it');
      away = true;
      if (error.code === 'unavailable') throw error;
      // A governance without the endpoint (an older version mid-upgrade) is waited for like an absent one.
      throw new ServiceError('unavailable', `governance does not serve ${endpoint}`, { cause: error });
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
      return {
        tier: answer.tier,
        maxTokens: answer.max_tokens,
        clipped: answer.clipped,
        waitMs: answer.wait_ms,
      };
    },

    async admitOpen(run, call) {
      const tier = await posture?.openTier(callerOf(run), call.tier);
      if (tier === undefined) return undefined;
      return { tier, maxTokens: call.requestedMaxTokens, clipped: false, waitMs: 0 };
    },

    async recordCost(run, call) {
      await ask(run, GOVERNANCE_RECORD_COST, { identity: run, ...costBody(call) });
    },

    async recordCosts(run, calls) {
      for (let at = 0; at < calls.length; at += MAX_RECORDED_COSTS) {
        const chunk = calls.slice(at, at + MAX_RECORDED_COSTS);
        const only = chunk.length === 1 ? chunk[0] : undefined;
        if (only !== undefined) {
          await this.recordCost(run, only);
          continue;
        }
        try {
          await ask(run, GOVERNANCE_RECORD_COSTS, { identity: run, records: chunk.map(costBody) });
        } catch (error) {
          // A governance of a version before record_costs (mid-upgrade) records them one by one.
          if (!(isServiceError(error) && isServiceError(error.cause) && error.cause.code === 'unimplemented')) {
            throw error;
          }
          for (const call of chunk) await this.recordCost(run, call);
        }
      }
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
      return answer.provider;
    },

    async providerKey(run, provider) {
      try {
        const answer = await ask(run, GOVERNANCE_PROVIDER_KEY, { tenant: run.tenant, provider });
        return answer.key;
      } catch (error) {
        if (refusalOf(GOVERNANCE_PROVIDER_KEY, error) === 'no_key') return undefined;
        throw error;
      }
    },
  };
}

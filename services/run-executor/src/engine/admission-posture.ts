import { GOVERNANCE_ADMISSION_POSTURE, isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { InternalCaller } from '@ars/bus';
import type { Logger } from '@ars/telemetry';

/**
 * Which governance tiers admit every LLM call, as governance last said
 * (`_governance.admission_posture`): a tier with no models list, budget,
 * max-tokens cap or rate limit, whose admission can neither refuse, clip,
 * delay nor report a call. The engine admits calls of such a tier itself,
 * and sends their costs together (`run-costs.ts`), instead of asking
 * governance once per call.
 *
 * The answer is kept until a configuration change is announced (governance
 * announces every write of its posture on `ars.cfg.changed`), the
 * connection drops, or `cacheMs` passes; an answer under way at a notice
 * is used by no call. So a posture set before a call's admission applies to
 * it, as when governance is asked (on a cluster, in practice: see
 * `config-changes.ts` of `@ars/bus`).
 *
 * It fails towards asking: while governance does not answer (or is a
 * version without the endpoint), calls are admitted by governance, which
 * fails closed. A failed answer is asked again after
 * {@link UNANSWERED_RETRY_MS}, so an outage costs one extra request per
 * second, not one per call.
 */
export interface AdmissionPosture {
  /**
   * The tier a call naming `tier` falls under, when that tier admits every
   * call; undefined when governance must decide (a constraining tier, no
   * answer, or the cache off).
   */
  openTier(caller: VerifiedIdentity, tier: string | undefined): Promise<string | undefined>;
  /** Stops watching for configuration changes. */
  stop(): void;
}

/** Options of {@link createAdmissionPosture}. */
export interface AdmissionPostureOptions {
  readonly rpc: InternalCaller;
  readonly logger: Logger;
  /** How long an answer is kept at most, in ms; 0 asks governance for every call (nothing admitted here). */
  readonly cacheMs: number;
  /** Each request's timeout, in ms. */
  readonly timeoutMs: number;
  /** Calls `onChange` whenever the posture may have changed (`watchConfigChanges` of the bus). */
  readonly watch?: (onChange: () => void) => { stop(): void };
}

/** How long a request governance did not answer is remembered before it is sent again, in ms. */
export const UNANSWERED_RETRY_MS = 1_000;

/** The tiers as governance answered: open or not, by name, and the one a call naming none falls under. */
interface Digest {
  readonly defaultTier: string;
  readonly open: ReadonlyMap<string, boolean>;
}

interface Kept {
  /** Until when the answer is used; +∞ while under way. */
  until: number;
  /** The notice count when it was asked: a notice since makes it stale. */
  readonly generation: number;
  readonly digest: Promise<Digest | undefined>;
}

export function createAdmissionPosture(options: AdmissionPostureOptions): AdmissionPosture {
  const { rpc, logger, cacheMs, timeoutMs } = options;
  let kept: Kept | undefined;
  let generation = 0;
  let warned = false;
  const watch =
    cacheMs > 0
      ? options.watch?.(() => {
          generation += 1;
          kept = undefined;
        })
      : undefined;

  async function ask(caller: VerifiedIdentity): Promise<Digest | undefined> {
    try {
      const reply = await callInternal(rpc, GOVERNANCE_ADMISSION_POSTURE, caller, {}, { timeoutMs });
      warned = false;
      return {
        defaultTier: reply.default_tier,
        open: new Map(reply.tiers.map((tier) => [tier.name, tier.open])),
      };
    } catch (error) {
      if (!warned) {
        warned = true;
        logger.info(
          { code: isServiceError(error) ? error.code : undefined, err: error },
          'governance did not answer which tiers admit every call; each call asks governance meanwhile',
        );
      }
      return undefined;
    }
  }

  function current(caller: VerifiedIdentity): Kept {
    if (kept !== undefined && kept.until > Date.now()) return kept;
    const entry: Kept = { until: Number.POSITIVE_INFINITY, generation, digest: ask(caller) };
    kept = entry;
    void entry.digest.then((digest) => {
      entry.until = Date.now() + (digest === undefined ? Math.min(cacheMs, UNANSWERED_RETRY_MS) : cacheMs);
    });
    return entry;
  }

  return {
    async openTier(caller, tier) {
      if (cacheMs <= 0) return undefined;
      const entry = current(caller);
      const digest = await entry.digest;
      if (digest === undefined || entry.generation !== generation) return undefined;
      const name = tier !== undefined && digest.open.has(tier) ? tier : digest.defaultTier;
      return digest.open.get(name) === true ? name : undefined;
    },
    stop() {
      watch?.stop();
      kept = undefined;
    },
  };
}

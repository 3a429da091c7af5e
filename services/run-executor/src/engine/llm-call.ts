import { ServiceError } from '@ars/contracts';
import { BrokerError } from '@ars/service-kit';
import { ContextLengthExceeded, OUTPUT_MODES, OutputModeRefused, RESPONSE_FORMAT_OF } from '../providers/provider.ts';
import type {
  CompletionRequest,
  CompletionResult,
  LlmParameters,
  LlmProvider,
  OutputMode,
  ProviderSettings,
} from '../providers/provider.ts';
import { modelOf, providerFor, providerName } from '../providers/select.ts';
import { withLlmSpan } from './call-spans.ts';
import type { EngineSettings } from './engine-config.ts';
import { LlmCallRefused } from './governance.ts';
import type { RunMedia } from './multimodal-inputs.ts';
import type { OutputModeMemory } from './output-mode-memory.ts';
import { occurredAt } from './run-events.ts';
import type { Admission, CostRecord, FailoverTarget, Governance, RunQuad } from './governance.ts';

/**
 * One governed LLM call of a planner step:
 *
 * 1. the admission: a call whose tier admits every call (no models list,
 *    budget, cap or rate limit: `admission-posture.ts`) is admitted without
 *    asking, with the max tokens requested; any other is admitted by
 *    `_governance.admit_llm_call` with the model and the requested max
 *    tokens (`llm_params.max_tokens`, else `LLM_DEFAULT_MAX_TOKENS`);
 * 2. before governance admits a call, the run's earlier costs are recorded
 *    (so a budget they crossed refuses this call): records already sent are
 *    awaited, the held ones but the last are sent and awaited, and the last
 *    goes with the admission (`record_cost`); a refusal throws
 *    `LlmCallRefused`; the admitted (maybe clipped) max tokens is what the
 *    provider is asked for; a `wait_ms` is slept, a cancellation or drain
 *    ending the wait (and the step) early;
 * 3. the provider call (an openai provider naming an inference broker gets
 *    its key from the broker first: `inference-credentials.ts`; the broker
 *    failing counts as the provider failing, and a key the provider refuses
 *    with 401 is fetched again at the next call); a call that returns once the run was interrupted
 *    (a hard cancel, a drain) is dropped like one that threw, its cost held;
 *    a provider error asks `_governance.failover` for the
 *    next provider of the tier's chain (its key from
 *    `_governance.provider_key`), admits again and retries there; the run
 *    keeps the provider it failed over to for its later steps; a model
 *    refusing an output mode is asked in the next one (`llm.mode_downgraded`),
 *    and the executor remembers it for later runs (`output-mode-memory.ts`);
 *    the run's input images are made, before each provider call, into what
 *    that provider and model take (`multimodal-inputs.ts`);
 * 4. the cost, with `call_id = <run>:<step>:<attempt>:<claim>`, is held by the run
 *    (`holdCost`) for the next admission governance decides to carry; the
 *    run sends the costs it holds together (`_governance.record_costs`)
 *    when no admission takes them soon, and before the run ends. An
 *    admission that fails other than by a refusal may not have recorded
 *    its cost: it is sent again on its own (the call id keeps it recorded
 *    once).
 */

/** The provider a run calls now, and with which parameters (replaced by a failover). */
export interface RunLlm {
  provider: LlmProvider;
  settings: ProviderSettings;
  params: LlmParameters;
  /** The output mode the provider accepted last (absent: `tools`). */
  outputMode?: OutputMode | undefined;
}

/** A provider call that failed for a reason of its own (not a cancellation). */
export class ProviderFailure extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ProviderFailure';
  }
}

/** What the call needs from its run. */
export interface GovernedCallContext {
  readonly taskId: string;
  /**
   * This executor's claim of the run, in every call id: a step replayed by a
   * later claim (after a crash or a hand-back) calls the provider again, and
   * that call's cost is a record of its own, not a duplicate of the first.
   */
  readonly claim: string;
  readonly quad: RunQuad;
  readonly llm: RunLlm;
  readonly governance: Governance;
  readonly settings: Pick<
    EngineSettings,
    'defaultMaxTokens' | 'llmPrices' | 'llmApiKey' | 'llmTimeoutMs' | 'captureLlmContent'
  >;
  /** The agent's scripted records, for a scripted provider reached by failover. */
  readonly script?: readonly Record<string, unknown>[] | undefined;
  /** True once a hard cancel, a drain or a lost lease interrupted the run. */
  interrupted(): boolean;
  /** Sleeps unless the run is cancelled or drained first; false when interrupted. */
  pauseStep(ms: number): Promise<boolean>;
  /** Waits for the cost records already sent. */
  settleCost(): Promise<void>;
  /** Keeps a cost record under way, to be awaited later. */
  deferCost(record: Promise<void>): void;
  /** Holds this call's cost for the next admission to carry (or to go with the run's others). */
  holdCost(record: CostRecord): void;
  /** The costs held, oldest first, taken for an admission to carry (empty when none is held). */
  takeHeldCost(): CostRecord[];
  /** The key of a provider whose settings name an inference broker; throws `BrokerError`. */
  brokerKey(settings: ProviderSettings): Promise<string>;
  /** The provider refused the broker's key: the next call asks the broker again. */
  refuseBrokerKey(settings: ProviderSettings): void;
  /** Publishes one of the run's events (`llm.mode_downgraded`). */
  emit?(type: string, payload: Record<string, unknown>): void;
  /** Downgrades remembered across runs (absent: each run starts at `tools`). */
  readonly modes?: OutputModeMemory | undefined;
  /** The run's input images, made into what each call's provider and model take (absent: none). */
  readonly media?: RunMedia | undefined;
}

/** Failovers one call may take, whatever the chain says. */
const MAX_HOPS = 16;
const PROVIDER_KINDS = new Set(['scripted', 'openai']);

/** The call's cost: the provider's figure, else the price table's (USD per million tokens), else 0. */
export function costOf(result: CompletionResult, prices: EngineSettings['llmPrices']): number {
  if (result.costUsd > 0) return result.costUsd;
  const price = prices[result.model];
  if (price === undefined) return 0;
  return (result.usage.input_tokens * price.input + result.usage.output_tokens * price.output) / 1_000_000;
}

function failedOver(
  ctx: GovernedCallContext,
  failed: RunLlm,
  target: FailoverTarget,
  apiKey: string | undefined,
): RunLlm {
  const settings: ProviderSettings = {
    kind: target.kind as ProviderSettings['kind'],
    name: target.name,
    baseUrl: target.base_url,
    model: target.model,
    apiKey,
    script: target.kind === 'scripted' ? ctx.script : undefined,
  };
  const provider = providerFor(settings, { apiKey: ctx.settings.llmApiKey, timeoutMs: ctx.settings.llmTimeoutMs });
  // The chain entry's model, else the model the run was calling.
  return {
    provider,
    settings,
    params: { ...failed.params, model: target.model ?? modelOf(failed.settings, failed.params) },
    // Another provider is asked in the most capable mode again.
    outputMode: undefined,
  };
}

/**
 * Runs the call; `undefined` when a cancellation or drain interrupted it.
 * `request` is everything but the parameters and the signal's owner's.
 */
export async function governedCompletion(
  ctx: GovernedCallContext,
  request: Omit<CompletionRequest, 'params'> & {
    /** Called before each provider call with its id (`<run>:<step>:<attempt>:<claim>`), before its first chunk. */
    readonly onAttempt?: (callId: string) => void;
  },
  stepNo: number,
): Promise<CompletionResult | undefined> {
  await ctx.settleCost();
  // A model another run downgraded is asked in the mode that worked (no llm.mode_downgraded again).
  ctx.llm.outputMode ??= recalledMode(ctx, ctx.llm);
  let llm = ctx.llm;
  let hop = 0;
  for (let attempt = 1; ; attempt++) {
    const model = modelOf(llm.settings, llm.params);
    const requestedMaxTokens = llm.params.max_tokens ?? ctx.settings.defaultMaxTokens;
    const admission = await admit(ctx, { model, requestedMaxTokens });
    if (admission.waitMs > 0 && !(await ctx.pauseStep(admission.waitMs))) return undefined;
    if (ctx.interrupted()) return undefined;
    const callId = `${ctx.taskId}:${stepNo}:${attempt}:${ctx.claim}`;
    request.onAttempt?.(callId);
    let result: CompletionResult;
    try {
      const { onAttempt: _, ...providerRequest } = request;
      const provider = await providerOf(ctx, llm);
      const target = { provider, settings: llm.settings, model };
      const messages = (await ctx.media?.materialize(request.messages, target, request.signal)) ?? request.messages;
      const facts = {
        system: llm.settings.kind,
        provider: providerName(llm.settings),
        model,
        maxTokens: admission.maxTokens,
        callId,
        ...(ctx.settings.captureLlmContent ? { content: { system: request.system, messages } } : {}),
      };
      result = await withLlmSpan(facts, providerRequest.onChunk, (onChunk) =>
        provider.complete({
          ...providerRequest,
          onChunk,
          messages,
          params: { ...llm.params, model, max_tokens: admission.maxTokens },
          outputMode: llm.outputMode ?? 'tools',
        }),
      );
    } catch (error) {
      if (ctx.interrupted()) return undefined;
      if (error instanceof ContextLengthExceeded) throw error;
      const downgraded = error instanceof OutputModeRefused ? downgrade(ctx, llm, model, error) : undefined;
      if (downgraded !== undefined) {
        llm = downgraded;
        continue;
      }
      if (llm.settings.inferenceBroker !== undefined && statusOf(error) === 401) ctx.refuseBrokerKey(llm.settings);
      const next = await nextProvider(ctx, llm, admission.tier, hop + 1, error);
      if (next === undefined) throw lastFailure(error);
      hop = next.hop;
      llm = { ...next.llm, outputMode: recalledMode(ctx, next.llm) };
      // The run stays on the provider it failed over to.
      Object.assign(ctx.llm, llm);
      continue;
    }
    const costUsd = costOf(result, ctx.settings.llmPrices);
    ctx.holdCost({
      model: result.model,
      tier: admission.tier,
      costUsd,
      tokensIn: result.usage.input_tokens,
      tokensOut: result.usage.output_tokens,
      callId,
    });
    // A provider may return after a hard cancel or a drain stopped the run: the call's tokens are spent, but
    // its decision (maybe from a cut-short answer) must not be acted on.
    if (ctx.interrupted()) return undefined;
    return { ...result, costUsd };
  }
}

/** The next output mode after `refused` (kept by the run), `llm.mode_downgraded`; undefined past the last. */
function downgrade(
  ctx: GovernedCallContext,
  llm: RunLlm,
  model: string,
  refused: OutputModeRefused,
): RunLlm | undefined {
  const from = refused.mode;
  const to = OUTPUT_MODES[OUTPUT_MODES.indexOf(from) + 1];
  if (to === undefined) return undefined;
  ctx.emit?.('llm.mode_downgraded', {
    Identity: ctx.quad,
    Model: model,
    FromMode: from,
    ToMode: to,
    From: RESPONSE_FORMAT_OF[from],
    To: RESPONSE_FORMAT_OF[to],
    Reason: refused.message.slice(0, 500),
    OccurredAt: occurredAt(),
  });
  ctx.llm.outputMode = to;
  ctx.modes?.remember({ settings: llm.settings, model }, to);
  return { ...llm, outputMode: to };
}

function recalledMode(ctx: GovernedCallContext, llm: RunLlm): OutputMode | undefined {
  return ctx.modes?.recall({ settings: llm.settings, model: modelOf(llm.settings, llm.params) });
}

/** The run's provider, with its inference broker's key when its settings name one (the broker caches it). */
async function providerOf(ctx: GovernedCallContext, llm: RunLlm): Promise<LlmProvider> {
  const { settings } = llm;
  if (settings.kind !== 'openai' || settings.inferenceBroker === undefined) return llm.provider;
  const apiKey = await ctx.brokerKey(settings);
  return providerFor({ ...settings, apiKey }, { timeoutMs: ctx.settings.llmTimeoutMs });
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * How a call fails once no failover is left: a provider error fails the run
 * `llm_error`; an inference broker that failed transiently (unreachable,
 * timeout, 5xx, 429) leaves the run to be retried later, as an absent
 * governance does, and one that refused (4xx, malformed, expired) fails it.
 */
function lastFailure(error: unknown): Error {
  if (error instanceof BrokerError && error.retryable) {
    return new ServiceError('unavailable', `inference broker ${error.broker} failed: ${error.reason}`, {
      cause: error,
    });
  }
  return new ProviderFailure(error);
}

/**
 * The call's admission: without asking when its tier admits every call
 * (its cost then waits with the others held); else governance's, after the
 * held costs but the last were recorded, carrying the last. A refusal
 * recorded it first; any other failure may not have, so it is sent on its
 * own before the failure goes on.
 */
async function admit(
  ctx: GovernedCallContext,
  call: { model: string; requestedMaxTokens: number },
): Promise<Admission> {
  const open = await ctx.governance.admitOpen?.(ctx.quad, call);
  if (open !== undefined) return open;
  const held = ctx.takeHeldCost();
  const carried = held.pop();
  if (held.length > 0) {
    ctx.deferCost(ctx.governance.recordCosts(ctx.quad, held));
    await ctx.settleCost();
  }
  try {
    return await ctx.governance.admit(ctx.quad, carried === undefined ? call : { ...call, recordFirst: carried });
  } catch (error) {
    if (carried !== undefined && !(error instanceof LlmCallRefused)) {
      ctx.deferCost(ctx.governance.recordCost(ctx.quad, carried));
    }
    throw error;
  }
}

/** The provider to retry on after `error`, skipping chain entries of a kind this executor cannot call. */
async function nextProvider(
  ctx: GovernedCallContext,
  failed: RunLlm,
  tier: string | undefined,
  firstHop: number,
  error: unknown,
): Promise<{ llm: RunLlm; hop: number } | undefined> {
  let from = providerName(failed.settings);
  let reason = error instanceof Error ? error.message : String(error);
  for (let hop = firstHop; hop <= MAX_HOPS; hop++) {
    const target = await ctx.governance.failover(ctx.quad, {
      tier,
      fromProvider: from,
      hopIndex: hop,
      accumulatedCost: 0,
      reason,
    });
    if (target === null) return undefined;
    if (PROVIDER_KINDS.has(target.kind)) {
      const key = target.kind === 'openai' ? await ctx.governance.providerKey(ctx.quad, target.name) : undefined;
      return { llm: failedOver(ctx, failed, target, key), hop };
    }
    from = target.name;
    reason = `provider kind ${target.kind} is not supported by this executor`;
  }
  return undefined;
}

import type { Logger } from '@ars/telemetry';
import type { CostRecord } from './governance.ts';

/**
 * How long a call's cost waits for the next call's admission to carry it
 * before the run sends it on its own (`_governance.record_cost`), in ms: a
 * planner step usually calls again sooner (one request instead of two),
 * while spend seen by the tenant's other runs lags by at most this much.
 */
export const COST_HOLD_MS = 1_000;

/**
 * A run's LLM call costs on their way to governance: the last call's cost
 * is held for the next admission to carry (see `llm-call.ts`) and sent on
 * its own after {@link COST_HOLD_MS} when no admission took it; the records
 * sent on their own are awaited before the next call and before the run
 * ends. A record that fails is logged, never fails the run.
 */
export class RunCosts {
  readonly #send: (record: CostRecord) => Promise<void>;
  readonly #log: Logger;
  #pending: Promise<void> = Promise.resolve();
  #held: { readonly record: CostRecord; readonly timer: NodeJS.Timeout } | undefined;

  /** `send` records one cost with governance on its own. */
  constructor(send: (record: CostRecord) => Promise<void>, log: Logger) {
    this.#send = send;
    this.#log = log;
  }

  /** Settles once every record sent on its own so far was answered. */
  get pending(): Promise<void> {
    return this.#pending;
  }

  /** Keeps a record under way to be awaited later. */
  defer(record: Promise<void>): void {
    const recorded = record.catch((error: unknown) =>
      this.#log.warn({ err: error }, 'LLM call cost not recorded with governance'),
    );
    this.#pending = Promise.all([this.#pending, recorded]).then(() => undefined);
  }

  /** Holds a call's cost for the next admission; one held before is sent on its own first. */
  hold(record: CostRecord): void {
    this.sendHeld();
    const timer = setTimeout(() => this.sendHeld(), COST_HOLD_MS);
    timer.unref();
    this.#held = { record, timer };
  }

  /** The held cost, for an admission to carry. */
  take(): CostRecord | undefined {
    const held = this.#held;
    if (held === undefined) return undefined;
    clearTimeout(held.timer);
    this.#held = undefined;
    return held.record;
  }

  /** Sends the held cost on its own now (no next call will carry it). */
  sendHeld(): void {
    const record = this.take();
    if (record !== undefined) this.defer(this.#send(record));
  }

  /** Sends the held cost, then waits for every record under way: the run's costs are with governance. */
  flush(): Promise<void> {
    this.sendHeld();
    return this.#pending;
  }
}

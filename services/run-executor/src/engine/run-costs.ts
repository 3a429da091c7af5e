import type { Logger } from '@ars/telemetry';
import type { CostRecord } from './governance.ts';

/**
 * How long a call's cost waits for the next call's admission to carry it
 * before the run sends it on its own (`_governance.record_cost`), in ms: a
 * planner step usually calls again sooner (one request instead of two),
 * while spend seen by the tenant's other runs lags by at most this much.
 * Costs of calls admitted without asking (`admission-posture.ts`) wait the
 * same, and go together: one request for a run's calls of a second.
 */
export const COST_HOLD_MS = 1_000;

/**
 * A run's LLM call costs on their way to governance: the costs not yet
 * sent are held, for the next admission governance decides to carry (see
 * `llm-call.ts`), and sent together after {@link COST_HOLD_MS} from the
 * oldest when no admission took them, and when the run ends; the records
 * sent are awaited before the next call and before the run ends. A record
 * that fails is logged, never fails the run.
 */
export class RunCosts {
  readonly #send: (records: readonly CostRecord[]) => Promise<void>;
  readonly #log: Logger;
  #pending: Promise<void> = Promise.resolve();
  #held: CostRecord[] = [];
  #timer: NodeJS.Timeout | undefined;

  /** `send` records costs with governance, in one request where it can. */
  constructor(send: (records: readonly CostRecord[]) => Promise<void>, log: Logger) {
    this.#send = send;
    this.#log = log;
  }

  /** Settles once every record sent so far was answered. */
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

  /** Holds a call's cost with the others not yet sent; they go after {@link COST_HOLD_MS} unless an admission takes them. */
  hold(record: CostRecord): void {
    this.#held.push(record);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.sendHeld(), COST_HOLD_MS);
    this.#timer.unref();
  }

  /** The costs held, oldest first, for an admission to carry (empty when none is). */
  take(): CostRecord[] {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const held = this.#held;
    this.#held = [];
    return held;
  }

  /** Sends the held costs now (no next call will carry them). */
  sendHeld(): void {
    const held = this.take();
    if (held.length > 0) this.defer(this.#send(held));
  }

  /** Sends the held costs, then waits for every record under way: the run's costs are with governance. */
  flush(): Promise<void> {
    this.sendHeld();
    return this.#pending;
  }
}

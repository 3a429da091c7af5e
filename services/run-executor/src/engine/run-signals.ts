import { setTimeout as delay } from 'node:timers/promises';

/**
 * How one claim of a run is stopped: its exit request (a hand-back, a lost
 * lease), cancellation, the abort signals of its calls, the waits that a
 * stop ends early (a park, a rate-limit sleep, an approval), and the lease
 * checks before each of its writes and events. It knows nothing else of the
 * run: the step modules ask it and signal through it.
 */

/** What the holder of the run's RUNS message does when the run returns. */
export type RunExit =
  | { readonly kind: 'done' }
  | { readonly kind: 'handback' }
  | { readonly kind: 'lost' }
  | { readonly kind: 'retry'; readonly delayMs: number };

/** Why the run must leave this executor before it ends: a drain's hand-back, or a lease another executor took. */
export type ExitRequest = 'handback' | 'lost';

/** A pending cancellation. */
export interface CancelRequest {
  readonly reason: string;
  readonly cascaded: boolean;
  readonly hard: boolean;
}

/** Thrown by {@link RunSignals.assertLease}: the run is no longer this executor's to write. */
export class RunLeaseLost extends Error {
  constructor(taskId: string) {
    super(`the lease of run ${taskId} is no longer held here`);
    this.name = 'RunLeaseLost';
  }
}

/** Options of {@link RunSignals}. */
export interface RunSignalsOptions {
  /** Whether this executor may still act for the run (its lease; see `LeaseManager.holds`). @default always */
  readonly holdsLease?: () => boolean;
  /** Called once the run is lost to another executor (its events are silenced). */
  readonly onLost?: () => void;
}

export class RunSignals {
  readonly #taskId: string;
  /** Aborts the run's LLM calls and its read-only and idempotent tool calls: a hard cancel, a hand-back, a lost lease. */
  readonly #abort = new AbortController();
  /** Aborts an unsafe tool call: a hard cancel and a lost lease at once, a hand-back only when its allowance ends. */
  readonly #unsafeAbort = new AbortController();
  #unsafeCalls = 0;
  #unsafeTimer: NodeJS.Timeout | undefined;
  #exit: ExitRequest | undefined;
  #terminated = false;
  #draining = false;
  #parked = false;
  #cancel: CancelRequest | undefined;
  #wake: (() => void) | undefined;
  /** Waits for a human (an approval) that a stop ends. */
  readonly #humanWaits = new Set<() => void>();
  /** Waits inside a step (a rate-limit wait) that a cancellation or drain ends early. */
  readonly #stepWaits = new Set<() => void>();
  readonly #holdsLease: () => boolean;
  readonly #onLost: () => void;

  constructor(taskId: string, options: RunSignalsOptions = {}) {
    this.#taskId = taskId;
    this.#holdsLease = options.holdsLease ?? (() => true);
    this.#onLost = options.onLost ?? (() => undefined);
  }

  /** Aborted by a hard cancel, a hand-back or a lost lease: the signal of LLM calls and safe tool calls. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Set once the run must leave this executor. */
  get exitRequest(): ExitRequest | undefined {
    return this.#exit;
  }

  /** True once the run's end began on this executor (see `finishRun`). */
  get terminated(): boolean {
    return this.#terminated;
  }

  /** Marks the run ended here: nothing of it may run again. */
  markTerminated(): void {
    this.#terminated = true;
  }

  /** True once a drain asked the run to leave rather than park. */
  get draining(): boolean {
    return this.#draining;
  }

  /** The cancellation the run has to honour, if any. */
  get cancel(): CancelRequest | undefined {
    return this.#cancel;
  }

  /** True once a hard cancel, a drain or a lost lease interrupted in-flight calls. */
  get interrupted(): boolean {
    return this.#exit !== undefined || this.#cancel?.hard === true || this.#abort.signal.aborted;
  }

  /** True while the run waits for a human (parked by a pause, or waiting for an approval). */
  get waiting(): boolean {
    return this.#parked || this.#humanWaits.size > 0;
  }

  /** True while an unsafe tool call (from its recorded intent to its checkpointed outcome) is under way and not aborted. */
  get unsafeCallInFlight(): boolean {
    return this.#unsafeCalls > 0 && !this.#unsafeAbort.signal.aborted;
  }

  /**
   * Drain: stop and leave the run to another executor (its last checkpoint
   * stands). LLM calls and read-only or idempotent tool calls are aborted at
   * once (the next executor redoes them); an unsafe call in flight is not:
   * it may run `unsafeCallMs` longer, its outcome is checkpointed as usual
   * and the run stops at the step boundary after it, so the next executor
   * does not fail the run `tool_outcome_unknown`. A call still running then
   * is aborted, and its outcome is unknown.
   */
  requestHandback(unsafeCallMs = 0): void {
    this.#exit ??= 'handback';
    this.#interrupt();
    if (this.#unsafeCalls === 0 || unsafeCallMs <= 0) this.#unsafeAbort.abort();
    else if (this.#unsafeTimer === undefined) {
      this.#unsafeTimer = setTimeout(() => this.#unsafeAbort.abort(), unsafeCallMs);
      this.#unsafeTimer.unref();
    }
  }

  /** Drain: finish if possible, but hand the run back instead of parking (now or later). */
  requestDrain(): void {
    this.#draining = true;
    if (this.waiting) this.requestHandback();
  }

  /** Another executor holds the lease now: stop without a word. */
  markLost(): void {
    this.#exit = 'lost';
    this.#onLost();
    this.#interrupt();
    this.#unsafeAbort.abort();
  }

  /** Cancel (from a control or a cascading parent). Hard aborts in-flight calls at once. */
  requestCancel(request: CancelRequest): void {
    this.#cancel = request;
    if (request.hard) {
      this.#abort.abort();
      this.#unsafeAbort.abort();
    }
    this.#stopWaits();
    this.wake();
  }

  /** A cancellation recorded for the run before this claim (a cascading parent's marker): honoured at the next boundary. */
  restoreCancel(request: CancelRequest): void {
    this.#cancel = request;
  }

  /**
   * Before each of the run's store writes: throws (and the run stops without
   * a word, as {@link markLost}) once this executor may no longer act for it.
   * Its events are checked the same way as they are emitted.
   */
  assertLease(): void {
    if (this.#exit === 'lost' || !this.#holdsLease()) {
      this.markLost();
      throw new RunLeaseLost(this.#taskId);
    }
  }

  /**
   * Whether this executor may still say something of the run (a control's
   * narration, an event): false, and the run stops without a word (as
   * {@link markLost}), once its lease is lost or stale. A run this executor
   * ended, or handed back, let its lease go itself: a control that reaches
   * its closing inbox late is still narrated (rejected `run_ended` or
   * `executor_draining`), as every accepted control is.
   */
  leaseHeld(): boolean {
    if (this.#exit === 'lost') return false;
    if (this.#terminated || this.#exit === 'handback' || this.#holdsLease()) return true;
    this.markLost();
    return false;
  }

  /** Parks the run until {@link wake} (a resume, a cancellation, a stop). */
  async park(): Promise<void> {
    this.#parked = true;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
    this.#parked = false;
  }

  /** Wakes a parked run so it re-reads its flags. */
  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /**
   * Sleeps `ms` inside a step; resolves false at once when the run is
   * cancelled (soft or hard), drained or lost meanwhile, true otherwise.
   */
  async sleep(ms: number): Promise<boolean> {
    if (this.interrupted || this.#cancel !== undefined) return false;
    const stopped = new AbortController();
    const stop = (): void => stopped.abort();
    this.#stepWaits.add(stop);
    try {
      await delay(ms, undefined, { signal: stopped.signal });
      return true;
    } catch (error) {
      if (stopped.signal.aborted) return false;
      throw error;
    } finally {
      this.#stepWaits.delete(stop);
    }
  }

  /**
   * Registers a wait for a human (an approval): `stop` ends it when the run
   * is cancelled, drained or lost. Returns the release, called when the wait
   * ends for any reason.
   */
  holdHumanWait(stop: () => void): () => void {
    this.#humanWaits.add(stop);
    return () => this.#humanWaits.delete(stop);
  }

  /**
   * Runs an unsafe tool call, from recording its intent to checkpointing its
   * outcome, under the signal that a hand-back does not abort (see
   * {@link requestHandback}). None starts once the run is interrupted (the
   * step is replayed by the run's next executor, or the run is cancelled).
   */
  async unsafeCall(call: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.interrupted) return;
    this.#unsafeCalls++;
    try {
      await call(this.#unsafeAbort.signal);
    } finally {
      this.#unsafeCalls--;
    }
  }

  /** What the holder of the run's message does once the run returned normally. */
  exit(): RunExit {
    if (this.#exit === 'lost') return { kind: 'lost' };
    if (this.#exit === 'handback' && !this.#terminated) return { kind: 'handback' };
    return { kind: 'done' };
  }

  /** Releases the timers (the run returned). */
  dispose(): void {
    clearTimeout(this.#unsafeTimer);
  }

  #interrupt(): void {
    this.#abort.abort();
    this.#stopWaits();
    this.wake();
  }

  #stopWaits(): void {
    for (const stop of [...this.#humanWaits, ...this.#stepWaits]) stop();
  }
}

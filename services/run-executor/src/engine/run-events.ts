import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodeToken, isStreamUnreachable } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { activeTraceHeaders, eventSubjectPrefix } from './event-pipeline.ts';
import type { EventPipeline, PipelineEvent, RunMeta } from './event-pipeline.ts';
import type { RunIdentity, StoredEventIds } from './stored-events.ts';

/**
 * A run's event emitter. Publishes are issued without waiting for each
 * acknowledgement: they leave on one connection in call order and JetStream
 * stores them in that order, so the stream shows a run's events in the order
 * the engine emitted them. `flush()` waits for every outstanding
 * acknowledgement (at each checkpoint and before the run's message is
 * acknowledged) and reports a failed publish.
 *
 * An event whose publish found no stream (nats-server down or restarting,
 * no acknowledgement in time) is not given up: `flush()` keeps the run
 * there until the stream answers again, asks it which of those events it
 * stored after all, and publishes the others again, in their order, under
 * their own ids as `Nats-Msg-Id`. No later step's event goes out before
 * them, and none is stored twice. After {@link RESTORE_DEADLINE_MS} the
 * rest is reported like any failed publish. Once the emitter is sealed
 * (below), the LLM, tool and planner events among them are dropped: the
 * terminal event is published beside the last flush, and none of those may
 * follow it.
 *
 * After the terminal event is under way the emitter is sealed: LLM, tool and
 * planner events of the run are dropped, so none can follow `task.cancelled`.
 * A run whose lease was lost is silenced altogether, also one whose lease
 * has gone stale while its process stood still (asked before each event).
 */

/** How long `flush()` keeps trying to store events whose publish found no stream. */
export const RESTORE_DEADLINE_MS = 120_000;
/**
 * Waits between those tries: from the first to the last, then the last again.
 * A try while the connection is down costs nothing (nothing is sent), so
 * the last is short: a run goes on within a second of the stream's return.
 */
const RESTORE_BACKOFF_MS = [100, 250, 500, 1_000];
/** A failed try is logged once in this many (the first, then about every 10 s). */
const RESTORE_LOG_EVERY = 10;

const SEALED_PREFIXES = ['llm.', 'tool.', 'planner.'];

/** An event whose publish found no stream, kept to be published again. */
interface Unstored {
  /** Emission order. */
  readonly order: number;
  readonly event: PipelineEvent & { readonly id: string };
}

/** Options of {@link RunEvents}. */
export interface RunEventsOptions {
  readonly pipeline: EventPipeline;
  readonly identity: RunIdentity;
  readonly logger: Logger;
  /** Asked which events the stream holds after an outage. */
  readonly storedIds: StoredEventIds;
  /** A sequence below every event this emitter publishes (the run's `task.spawned`); @default 0 */
  readonly fromSequence?: number;
  /** @default {@link RESTORE_DEADLINE_MS} */
  readonly restoreDeadlineMs?: number;
  /** Asked before each event: false once the run's lease is no longer this executor's, which silences the emitter. */
  readonly holdsRun?: () => boolean;
  /** The run's facts for the metrics, carried by each of its events (see `PipelineEvent.meta`). */
  readonly meta?: RunMeta;
}

export class RunEvents {
  readonly identity: RunIdentity;
  readonly #pipeline: EventPipeline;
  readonly #subjectPrefix: string;
  readonly #runToken: string;
  readonly #trace: readonly (readonly [string, string])[];
  readonly #logger: Logger;
  readonly #storedIds: StoredEventIds;
  readonly #restoreDeadlineMs: number;
  readonly #holdsRun: () => boolean;
  readonly #meta: RunMeta | undefined;
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  #failure: unknown;
  #sealed = false;
  #silenced = false;
  #emitted = 0;
  #unstored: Unstored[] = [];
  /** The highest sequence acknowledged so far. */
  #highest: number;
  /** Every event emitted before the last complete flush is stored at or below this sequence. */
  #settled: number;

  constructor(options: RunEventsOptions) {
    this.#pipeline = options.pipeline;
    this.identity = options.identity;
    // Fixed for the run's life: its subject prefix and run token, and the trace of the start that queued it.
    this.#subjectPrefix = eventSubjectPrefix(options.identity);
    this.#runToken = encodeToken(options.identity.run);
    this.#trace = activeTraceHeaders();
    this.#logger = options.logger;
    this.#storedIds = options.storedIds;
    this.#restoreDeadlineMs = options.restoreDeadlineMs ?? RESTORE_DEADLINE_MS;
    this.#holdsRun = options.holdsRun ?? (() => true);
    this.#meta = options.meta;
    this.#highest = options.fromSequence ?? 0;
    this.#settled = this.#highest;
  }

  /** `Identity` member of planner, LLM and tool payloads. */
  get quad(): RunIdentity {
    return this.identity;
  }

  /** True when an event of `type` would be dropped now. */
  dropped(type: string): boolean {
    if (!this.#silenced && !this.#holdsRun()) this.#silenced = true;
    return this.#silenced || (this.#sealed && SEALED_PREFIXES.some((p) => type.startsWith(p)));
  }

  /** Publishes without waiting for the acknowledgement. */
  emit(type: string, payload: Record<string, unknown>, eventId?: string): void {
    if (this.dropped(type)) return;
    const event = this.#event(type, payload, eventId);
    const order = this.#emitted++;
    this.#inFlight++;
    this.#pipeline
      .publish(event)
      .then(
        (sequence) => this.#acknowledged(sequence),
        (error: unknown) => {
          this.#logger.warn({ err: error, eventType: type, taskId: this.identity.run }, 'run event not stored');
          if (isStreamUnreachable(error)) this.#unstored.push({ order, event });
          else this.#failure ??= error;
        },
      )
      .finally(() => this.#settle());
  }

  /** Publishes and waits for this event's acknowledgement; resolves to its stream sequence (0 when dropped). */
  async emitNow(type: string, payload: Record<string, unknown>, eventId?: string): Promise<number> {
    if (this.dropped(type)) return 0;
    this.#emitted++;
    this.#inFlight++;
    try {
      const sequence = await this.#pipeline.publish(this.#event(type, payload, eventId));
      this.#acknowledged(sequence);
      return sequence;
    } finally {
      this.#settle();
    }
  }

  #acknowledged(sequence: number): void {
    if (sequence > this.#highest) this.#highest = sequence;
  }

  #settle(): void {
    this.#inFlight--;
    if (this.#inFlight === 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  #event(type: string, payload: Record<string, unknown>, eventId: string | undefined): Unstored['event'] {
    return {
      type,
      identity: this.identity,
      payload,
      subjectPrefix: this.#subjectPrefix,
      runToken: this.#runToken,
      trace: this.#trace,
      occurredAt: new Date().toISOString(),
      meta: this.#meta,
      ...(eventId === undefined ? { id: randomUUID() } : { id: eventId, eventId }),
    };
  }

  /**
   * Waits until every event emitted so far is acknowledged, publishing again
   * those that found no stream (see the class comment); throws the first
   * failure, once.
   */
  async flush(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    if (this.#unstored.length > 0) await this.#restore();
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure !== undefined) throw failure;
    this.#settled = this.#highest;
  }

  /** Stores the events whose publish found no stream, or gives up on them at the deadline. */
  async #restore(): Promise<void> {
    const deadline = Date.now() + this.#restoreDeadlineMs;
    for (let attempt = 0; this.#unstored.length > 0 && !this.#silenced; attempt++) {
      let stored: ReadonlySet<string> | undefined;
      try {
        stored = await this.#storedIds(this.identity, this.#settled + 1);
        this.#unstored.sort((a, b) => a.order - b.order);
        while (this.#unstored.length > 0) {
          const { event } = this.#unstored[0] as Unstored;
          // Under its own id as Nats-Msg-Id: should this try fail too, the next one cannot store it twice.
          // Sealed: the terminal event is under way, and no LLM, tool or planner event may follow it.
          const publish = !stored.has(event.id) && !this.dropped(event.type);
          if (publish) this.#acknowledged(await this.#pipeline.publish({ ...event, eventId: event.id }));
          this.#unstored.shift();
        }
        this.#logger.info({ taskId: this.identity.run, attempt }, 'run events stored after the event stream came back');
      } catch (error) {
        // Reading the stream fails while JetStream is away, whatever the error; a publish only when unreachable.
        const retryable = stored === undefined || isStreamUnreachable(error);
        if (attempt % RESTORE_LOG_EVERY === 0) {
          this.#logger.warn(
            { err: error, taskId: this.identity.run, attempt },
            'run events not stored yet; trying again',
          );
        }
        if (!retryable || Date.now() >= deadline) {
          this.#failure ??= error;
          this.#unstored = [];
          return;
        }
        await sleep(RESTORE_BACKOFF_MS[Math.min(attempt, RESTORE_BACKOFF_MS.length - 1)]);
      }
    }
  }

  /** Drops every later LLM, tool and planner event. */
  seal(): void {
    this.#sealed = true;
  }

  /** Drops every later event: another executor owns the run now. */
  silence(): void {
    this.#silenced = true;
  }
}

/** Now as the `OccurredAt`/`StartedAt` timestamp of a payload. */
export function occurredAt(): string {
  return new Date().toISOString();
}

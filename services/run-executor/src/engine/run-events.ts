import type { Logger } from '@ars/telemetry';
import { activeTraceHeaders, eventSubjectPrefix } from './event-pipeline.ts';
import type { EventPipeline, PipelineEvent } from './event-pipeline.ts';

/**
 * A run's event emitter. Publishes are issued without waiting for each
 * acknowledgement: they leave on one connection in call order and JetStream
 * stores them in that order, so the stream shows a run's events in the order
 * the engine emitted them. `flush()` waits for every outstanding
 * acknowledgement (at each checkpoint and before the run's message is
 * acknowledged) and reports a failed publish.
 *
 * After the terminal event is under way the emitter is sealed: LLM, tool and
 * planner events of the run are dropped, so none can follow `task.cancelled`.
 * A run whose lease was lost is silenced altogether.
 */

/** The identity of every event of a run. */
export interface RunIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run: string;
}

const SEALED_PREFIXES = ['llm.', 'tool.', 'planner.'];

export class RunEvents {
  readonly identity: RunIdentity;
  readonly #pipeline: EventPipeline;
  readonly #subjectPrefix: string;
  readonly #trace: readonly (readonly [string, string])[];
  readonly #logger: Logger;
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  #failure: unknown;
  #sealed = false;
  #silenced = false;

  constructor(pipeline: EventPipeline, identity: RunIdentity, logger: Logger) {
    this.#pipeline = pipeline;
    this.identity = identity;
    // Fixed for the run's life: its subject prefix, and the trace of the start that queued it.
    this.#subjectPrefix = eventSubjectPrefix(identity);
    this.#trace = activeTraceHeaders();
    this.#logger = logger;
  }

  /** `Identity` member of planner, LLM and tool payloads. */
  get quad(): RunIdentity {
    return this.identity;
  }

  /** True when an event of `type` would be dropped now. */
  dropped(type: string): boolean {
    return this.#silenced || (this.#sealed && SEALED_PREFIXES.some((p) => type.startsWith(p)));
  }

  /** Publishes without waiting for the acknowledgement. */
  emit(type: string, payload: Record<string, unknown>, eventId?: string): void {
    if (this.dropped(type)) return;
    this.#inFlight++;
    this.#pipeline
      .publish(this.#event(type, payload, eventId))
      .then(
        () => undefined,
        (error: unknown) => {
          this.#failure ??= error;
          this.#logger.warn({ err: error, eventType: type, taskId: this.identity.run }, 'run event not stored');
        },
      )
      .finally(() => {
        this.#inFlight--;
        if (this.#inFlight === 0) for (const wake of this.#waiters.splice(0)) wake();
      });
  }

  /** Publishes and waits for this event's acknowledgement; resolves to its stream sequence (0 when dropped). */
  async emitNow(type: string, payload: Record<string, unknown>, eventId?: string): Promise<number> {
    if (this.dropped(type)) return 0;
    this.#inFlight++;
    try {
      return await this.#pipeline.publish(this.#event(type, payload, eventId));
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) for (const wake of this.#waiters.splice(0)) wake();
    }
  }

  #event(type: string, payload: Record<string, unknown>, eventId: string | undefined): PipelineEvent {
    return {
      type,
      identity: this.identity,
      payload,
      subjectPrefix: this.#subjectPrefix,
      trace: this.#trace,
      ...(eventId === undefined ? {} : { eventId }),
    };
  }

  /** Waits until every event emitted so far is acknowledged; throws the first failure, once. */
  async flush(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure !== undefined) throw failure;
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

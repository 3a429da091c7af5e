import { z } from 'zod';

/**
 * Payload classes: `safe` payloads are delivered verbatim; `redacted` payloads
 * pass through the redactor on publish and subscribers receive a redacted
 * key/value map derived from the declared shape.
 */
export type EventClass = 'safe' | 'redacted';

/** One row of the canonical registry of 146 event types. */
export interface EventDef<P extends z.ZodType = z.ZodType> {
  /** The event type, exactly as the spec writes it. */
  readonly type: string;
  /** The spec's section: task, control, planner, llm, tool, session, … */
  readonly group: string;
  readonly class: EventClass;
  /** Payload schema; wire keys exactly as the spec writes them. */
  readonly payload: P;
  /** True for types the spec registers with no production emit path. */
  readonly reserved?: boolean;
  readonly summary: string;
}

/** Builds a registry row with its payload type inferred. */
export function defineEvent<P extends z.ZodType>(def: EventDef<P>): EventDef<P> {
  return def;
}

/**
 * The SSE frame as a zod schema (a record: clients ignore unknown members).
 * `payload` is the event type's payload; validate it with `getEvent(type)`.
 */
export const EventFrame = z
  .looseObject({
    type: z.string().describe('the event type'),
    sequence: z.int().nonnegative().describe('JetStream stream sequence; also the SSE id and the Last-Event-ID cursor'),
    occurred_at: z.iso.datetime({ offset: true }).describe('RFC 3339 timestamp'),
    tenant: z.string(),
    user: z.string(),
    session: z.string(),
    run: z.string().describe('the task id; empty when the event belongs to no run'),
    payload: z.record(z.string(), z.unknown()),
    trace_id: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional()
      .describe(
        "added member: the W3C trace id (32 lowercase hex digits) the event was published in, e.g. the start request's for a run's events; absent when it was published outside a trace",
      ),
  })
  .describe('EventFrame');

/**
 * One SSE frame's `data:` object. `sequence` is the JetStream stream sequence,
 * also the SSE `id:` and the `Last-Event-ID` cursor.
 */
export interface EventFrame {
  readonly type: string;
  readonly sequence: number;
  /** RFC 3339 timestamp of when the event occurred. */
  readonly occurred_at: string;
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  /** The run (task id); empty string when the event belongs to no run. */
  readonly run: string;
  readonly payload: Record<string, unknown>;
  /**
   * An added member (the Versioning rules allow one): the W3C trace id the
   * event was published in, so that a frame leads to its trace in Jaeger or
   * Tempo. Absent when the event was published outside a trace.
   */
  readonly trace_id?: string;
}

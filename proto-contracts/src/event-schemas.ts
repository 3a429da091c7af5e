import { EventFrame } from './event-def.ts';
import { EVENTS } from './events/index.ts';
import { JSON_SCHEMA_DIALECT, toJsonSchema } from './json-schema.ts';
import type { JsonSchema } from './json-schema.ts';

/** The JSON Schemas of the event stream. */
export interface EventJsonSchemas {
  readonly $schema: typeof JSON_SCHEMA_DIALECT;
  /** The SSE frame: one JSON object per `data:` line. */
  readonly frame: JsonSchema;
  /**
   * The payload schema of each of the 146 types, keyed by type. Each carries
   * `title` (the type), `description` and the annotations `x-ars-class`
   * (`safe` or `redacted`), `x-ars-group` and, for reserved types, `x-ars-reserved`.
   */
  readonly events: Readonly<Record<string, JsonSchema>>;
}

/** Annotation keywords added to event schemas (register them with a strict validator). */
export const EVENT_SCHEMA_ANNOTATIONS = ['x-ars-class', 'x-ars-group', 'x-ars-reserved'] as const;

/**
 * Emits JSON Schema (2020-12) for the frame and for the payload of every
 * registered event type. Payload schemas describe what the publisher emits;
 * clients still ignore unknown keys (Versioning, client tolerance rule 1).
 */
export function buildEventJsonSchemas(): EventJsonSchemas {
  const events: Record<string, JsonSchema> = {};
  for (const event of EVENTS) {
    events[event.type] = {
      ...toJsonSchema(event.payload, 'output'),
      title: event.type,
      description: event.summary,
      'x-ars-class': event.class,
      'x-ars-group': event.group,
      ...(event.reserved === true ? { 'x-ars-reserved': true } : {}),
    };
  }
  return {
    $schema: JSON_SCHEMA_DIALECT,
    frame: { ...toJsonSchema(EventFrame, 'output'), title: 'EventFrame' },
    events,
  };
}

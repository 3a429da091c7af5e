import { z } from 'zod';
import { IdentityScope } from '../identity.ts';

/**
 * Building blocks shared by every request and response schema: timestamps,
 * pagination, the `protocol_version` member of control-surface responses and
 * the request envelope (`identity` first, unknown members refused).
 */

/** RFC 3339 timestamp with a `Z` or numeric offset, e.g. `2025-01-02T03:04:05.678Z`. */
export const Timestamp = z.iso.datetime({ offset: true }).describe('RFC 3339 timestamp');
export type Timestamp = z.infer<typeof Timestamp>;

/** A JSON object whose members are not fixed by the contract. */
export const JsonObject = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObject>;

/**
 * A JSON object kept exactly as sent: checked like {@link JsonObject}, with
 * the same JSON Schema, but its parsed value is the input itself. zod's
 * record leaves a `__proto__` member out of what it returns, so a payload
 * that is stored and shown as the caller sent it (inject_context) would lose
 * that member silently; members are never copied or changed here.
 */
export const VerbatimJsonObject = z
  .custom<JsonObject>((value) => JsonObject.safeParse(value).success, {
    error: 'Invalid input: expected a JSON object',
  })
  .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} });
export type VerbatimJsonObject = z.infer<typeof VerbatimJsonObject>;

/** The wire contract's semver triple. */
export const ProtocolVersion = z
  .string()
  .regex(/^\d+\.\d+\.\d+$/)
  .describe('semver triple of the wire contract (pin this, not the build version)');

/** Page sizes of every list method: default and maximum number of items per page. */
export const PAGE_LIMITS = { default: 50, max: 500 } as const;

/** The `limit` member of list requests: 1 to 500 items, default 50. */
export const PageLimit = z
  .int()
  .min(1)
  .max(PAGE_LIMITS.max)
  .default(PAGE_LIMITS.default)
  .describe(`items per page, 1 to ${PAGE_LIMITS.max}; default ${PAGE_LIMITS.default}`);

/** An opaque cursor: the `next_cursor` of the previous page, passed back unchanged. */
export const Cursor = z.string().min(1).max(1024).describe('opaque cursor: the next_cursor of the previous page');

/**
 * The event-stream sequence a snapshot reflects. A client that reads the
 * snapshot and then subscribes with it as `Last-Event-ID` misses nothing and
 * applies nothing twice.
 */
export const Sequence = z
  .int()
  .nonnegative()
  .describe('event-stream sequence this snapshot reflects; subscribe with it as Last-Event-ID');

/** A non-empty identifier (task id, artifact id, agent id, …), at most 256 characters. */
export const Id = z.string().min(1).max(256);

/** Optional start and end of a time window (inclusive start, exclusive end). */
export const timeWindow = {
  since: Timestamp.optional().describe('inclusive start of the time window'),
  until: Timestamp.optional().describe('exclusive end of the time window'),
};

/** A non-empty list of distinct-meaning filter values (at most 100). */
export function filterList<T extends z.ZodType>(item: T) {
  return z.array(item).min(1).max(100);
}

/** The members of a list request: `limit` and `cursor`. */
export const pageRequest = { limit: PageLimit, cursor: Cursor.optional() };

/** The members of a list response: `items` and `next_cursor` (absent on the last page). */
export function pageOf<T extends z.ZodType>(item: T) {
  return {
    items: z.array(item),
    next_cursor: Cursor.optional().describe('absent on the last page'),
  };
}

/**
 * A request body: a strict object with `identity` first, then the method's
 * members. An unknown member fails validation (`invalid_request`).
 */
export function requestOf<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject({ identity: IdentityScope, ...shape });
}

/**
 * A response record: unknown members allowed (clients ignore them, and adding
 * members does not bump the protocol version).
 */
export function record<S extends z.ZodRawShape>(shape: S) {
  return z.looseObject(shape);
}

/** A control-surface response: the record plus `protocol_version`. */
export function versioned<S extends z.ZodRawShape>(shape: S) {
  return z.looseObject({ ...shape, protocol_version: ProtocolVersion });
}

export type ProtocolVersion = z.infer<typeof ProtocolVersion>;
export type PageLimit = z.infer<typeof PageLimit>;
export type Cursor = z.infer<typeof Cursor>;
export type Sequence = z.infer<typeof Sequence>;
export type Id = z.infer<typeof Id>;

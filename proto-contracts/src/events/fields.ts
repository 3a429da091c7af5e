import { z } from 'zod';
import { IdentityQuad, IdentityTriple } from '../identity.ts';
import { TaskStatus } from '../schemas/task.ts';
import { defineEvent } from '../event-def.ts';
import type { EventDef } from '../event-def.ts';

/**
 * The event document's type notation as zod schemas. Wire keys are the
 * spec's; these helpers only fix the value encodings.
 */

/** `str`. */
export const str = () => z.string();
/** `int`: a (safe) integer. */
export const int = () => z.int();
/** `uint`: a non-negative (safe) integer. */
export const uint = () => z.int().nonnegative();
/** `float`: any JSON number. */
export const float = () => z.number();
/** `bool`. */
export const bool = () => z.boolean();
/** `ts`: an RFC 3339 timestamp string (Go's time.Time JSON encoding). */
export const ts = () => z.iso.datetime({ offset: true }).describe('RFC 3339 timestamp');
/** `dur`: integer nanoseconds (Go's time.Duration JSON encoding). */
export const dur = () => z.int().nonnegative().describe('duration in integer nanoseconds');
/** An `(int)` instant such as `OpenedAt`: Unix epoch milliseconds. */
export const epochMs = () => z.int().nonnegative().describe('Unix epoch milliseconds');
/** `identity-quad`. */
export const quad = () => IdentityQuad;
/** An identity triple (audit `Requester`, `Impersonating`, shape-2 `Actor`). */
export const triple = () => IdentityTriple;
/** `list<T>`. */
export const list = <T extends z.ZodType>(item: T) => z.array(item);
/** A task status value (`PriorState`). */
export const status = () => TaskStatus;
/** A nested object whose members the spec does not show: any JSON object. */
export const opaque = (what: string) => z.looseObject({}).describe(`${what} (members not fixed by the contract)`);
/** A `map`: string keys, any JSON values. */
export const map = () => z.record(z.string(), z.unknown());
/** `any`: any JSON value (the key must be present). */
export const any = () => z.unknown();

/** A payload: exactly the declared keys (an undeclared key is a publisher bug). */
export function payload<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape);
}

/** A `safe` registry row (delivered verbatim). */
export function safeEvent(group: string, type: string, shape: z.ZodType, summary: string, reserved?: true): EventDef {
  return defineEvent({ type, group, class: 'safe', payload: shape, summary, ...(reserved ? { reserved } : {}) });
}

/** A row builder for one group: `safe` class, strict payload of the given shape. */
export function eventsOf(group: string) {
  return (type: string, shape: z.ZodRawShape, summary: string): EventDef =>
    safeEvent(group, type, payload(shape), summary);
}

import { z } from 'zod';
import { Id, Timestamp, record, timeWindow } from './common.ts';

/**
 * Filters of events.list and events.aggregate. `user` is an isolation
 * principal (omitted folds to the caller's own user; naming another needs
 * admin or console:fleet); `session` is a filter only; `tenant` naming
 * another tenant needs admin or console:fleet.
 */
export const EventsFilter = z.strictObject({
  tenant: Id.optional().describe('another tenant needs admin or console:fleet'),
  user: Id.optional().describe('isolation principal; omitted folds to the caller (or the whole tenant with a claim)'),
  session: Id.optional().describe('filter only; omitted means every session in scope'),
  run: Id.optional(),
  types: z.array(z.string().min(1)).min(1).max(146).optional().describe('event types; any of them'),
  ...timeWindow,
});
export type EventsFilter = z.infer<typeof EventsFilter>;

/** One time bucket of events.aggregate. */
export const EventBucket = record({
  start: Timestamp,
  count: z.int().nonnegative(),
  by_type: z.record(z.string(), z.int().nonnegative()),
});
export type EventBucket = z.infer<typeof EventBucket>;

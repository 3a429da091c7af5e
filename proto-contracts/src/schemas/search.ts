import { z } from 'zod';
import { Id, JsonObject, Timestamp, filterList, record, timeWindow } from './common.ts';
import { TaskStatus } from './task.ts';

/** The kinds of records search.query fans out to. */
export const SEARCH_KINDS = ['task', 'session', 'artifact', 'event'] as const;
export const SearchKind = z.enum(SEARCH_KINDS);
export type SearchKind = z.infer<typeof SearchKind>;

/**
 * Filters of every search.* method. `tenant_ids` and `user_ids` are isolation
 * principals (omitted: the caller's own); `session_ids` is a filter (one
 * value needs no claim). Beyond the caller's own: admin or console:fleet.
 */
export const SearchFilter = z.strictObject({
  tenant_ids: filterList(Id).optional(),
  user_ids: filterList(Id).optional(),
  session_ids: filterList(Id).optional(),
  kinds: filterList(SearchKind).optional().describe('search.query only: which owners to ask; default all'),
  types: filterList(z.string().min(1)).optional().describe('search.events: event types'),
  status: filterList(TaskStatus).optional().describe('search.tasks: task statuses'),
  ...timeWindow,
});
export type SearchFilter = z.infer<typeof SearchFilter>;

/** One search result. `record` is the matched Task, Session, ArtifactMetadata or EventFrame. */
export const SearchHit = record({
  kind: SearchKind,
  id: z.string().describe('task_id, session_id, artifact_id or the event sequence as a string'),
  tenant: z.string(),
  user: z.string(),
  session: z.string(),
  title: z.string().optional(),
  snippet: z.string().optional().describe('the matching text, shortened'),
  score: z.number().optional().describe('relevance; higher is better'),
  occurred_at: Timestamp.describe('created_at of the record, or occurred_at of the event'),
  record: JsonObject.optional(),
});
export type SearchHit = z.infer<typeof SearchHit>;

import { createHash } from 'node:crypto';
import type { Session, TitleSource } from '@ars/contracts';

/** The identity triple a session belongs to and is named by. */
export interface SessionTriple {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * States of a catalog entry. `open` and `closed` are the spec's; `erasing`
 * (tombstone written, cascade unfinished) and `erased` (cascade done) are
 * tombstones: every later admit is refused `session_erased` and no read
 * shows them.
 */
export const CATALOG_STATES = ['open', 'closed', 'erasing', 'erased'] as const;
export type CatalogState = (typeof CATALOG_STATES)[number];

/** The tombstone states. */
export const TOMBSTONE_STATES: readonly CatalogState[] = ['erasing', 'erased'];

/** The states reads may show. */
export const VISIBLE_STATES: readonly CatalogState[] = ['open', 'closed'];

/** What the run-executor's `_tasks.erase_session` reported. */
export interface TasksErased {
  readonly tasks_deleted: number;
  readonly state_records_deleted: number;
}

/**
 * Progress of an erasure, one member per finished step, so a resumed
 * erasure skips what is done and reports the counts of the first run.
 */
export interface ErasureProgress {
  readonly started_at: string;
  readonly attempts: number;
  readonly last_error?: string;
  readonly tasks?: TasksErased;
  readonly artifacts?: { readonly artifacts_deleted: number };
  readonly memory?: { readonly purged: boolean };
  /** The session-user tier of agent_config (agent-registry). */
  readonly agent_config?: { readonly skills_deleted: number; readonly settings_deleted: number };
  /** This service's state records (and projections) deleted. */
  readonly state?: { readonly state_records_deleted: number };
  /** Messages purged from the EVENTS stream. */
  readonly events?: { readonly purged: number };
  /** Fixed when the purge finished, so every retry reports the same instant. */
  readonly erased_at?: string;
}

/** One catalog entry. Instants are ISO 8601 UTC strings. */
export interface SessionDoc {
  _id: string;
  tenant: string;
  user: string;
  session_id: string;
  status: CatalogState;
  title?: string;
  title_source?: TitleSource;
  /** Automatic naming: attempted once, from the first turn. */
  naming?: 'pending' | 'done' | 'failed';
  created_at: string;
  last_seen_at: string;
  closed_at?: string;
  closed_reason?: string;
  task_count: number;
  last_task_id?: string;
  erasure?: ErasureProgress;
  erased_at?: string;
}

/** Why the idle reaper closes a session (`Reason`, later `PriorClosedReason`). */
export const IDLE_REASON = 'idle';

/** How many triples {@link sessionKey} remembers the digest of (the oldest is forgotten first). */
export const SESSION_KEY_CACHE_SIZE = 4_096;

const sessionKeys = new Map<string, string>();

/**
 * The catalog key of a triple: a digest, so any strings make a fixed-size
 * `_id`. Every read and write of a session's entry computes it (six times
 * per run), and a SHA-256 object per call was about 5% of the service's
 * CPU under load: the digests of recent triples are remembered.
 */
export function sessionKey(triple: SessionTriple): string {
  const text = JSON.stringify([triple.tenant, triple.user, triple.session]);
  let key = sessionKeys.get(text);
  if (key === undefined) {
    key = createHash('sha256').update(text).digest('hex');
    if (sessionKeys.size >= SESSION_KEY_CACHE_SIZE) sessionKeys.delete(sessionKeys.keys().next().value as string);
    sessionKeys.set(text, key);
  }
  return key;
}

/** The triple of a catalog entry. */
export function tripleOf(doc: Pick<SessionDoc, 'tenant' | 'user' | 'session_id'>): SessionTriple {
  return { tenant: doc.tenant, user: doc.user, session: doc.session_id };
}

/** True for `erasing` and `erased`. */
export function isTombstone(state: CatalogState): boolean {
  return TOMBSTONE_STATES.includes(state);
}

/** The wire `Session` record of a visible catalog entry. */
export function toSessionView(doc: SessionDoc): Session {
  return {
    session_id: doc.session_id,
    tenant: doc.tenant,
    user: doc.user,
    status: doc.status === 'closed' ? 'closed' : 'open',
    ...(doc.title === undefined ? {} : { title: doc.title }),
    ...(doc.title_source === undefined ? {} : { title_source: doc.title_source }),
    created_at: doc.created_at,
    last_seen_at: doc.last_seen_at,
    ...(doc.closed_at === undefined ? {} : { closed_at: doc.closed_at }),
    ...(doc.closed_reason === undefined ? {} : { closed_reason: doc.closed_reason }),
    task_count: doc.task_count,
  };
}

/** Normalises an RFC 3339 instant (any offset) to the ISO UTC form the store compares. */
export function toIsoUtc(timestamp: string): string {
  return new Date(timestamp).toISOString();
}

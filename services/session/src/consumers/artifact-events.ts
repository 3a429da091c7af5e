import { eventFilterSubject } from '@ars/bus';
import { isTombstone } from '../domain/session.ts';
import type { SessionTriple } from '../domain/session.ts';
import type { ProjectionRepository } from '../store/projection.repository.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import type { EventHandler } from './durable-consumer.ts';

/** Durable name of the artifact-count consumer. */
export const ARTIFACTS_CONSUMER = 'session-artifacts';

/** The EVENTS subject filter of the artifact-count consumer. */
export const ARTIFACT_EVENTS_FILTER = eventFilterSubject({ type: 'artifacts.>' });

/**
 * Keeps the per-session artifact projection behind `sessions.inspect`'s
 * `artifact_count`: `artifacts.uploaded` adds, `artifacts.deleted` removes.
 * Both are idempotent; events of an erased session are dropped.
 */
export function createArtifactEventHandler(deps: {
  readonly sessions: SessionRepository;
  readonly projections: ProjectionRepository;
}): EventHandler {
  return async (frame) => {
    const artifactId = frame.payload.artifact_id;
    if (typeof artifactId !== 'string') return;
    const triple: SessionTriple = { tenant: frame.tenant, user: frame.user, session: frame.session };
    const session = await deps.sessions.find(triple);
    if (session !== null && isTombstone(session.status)) return;
    if (frame.type === 'artifacts.uploaded') await deps.projections.addArtifact(triple, artifactId);
    else if (frame.type === 'artifacts.deleted') await deps.projections.removeArtifact(triple, artifactId);
    else return;
    const after = await deps.sessions.find(triple);
    if (after !== null && isTombstone(after.status)) await deps.projections.deleteSession(triple);
  };
}

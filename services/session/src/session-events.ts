import type { EventPublisher } from '@ars/bus';
import type { TitleSource } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { SessionTriple } from './domain/session.ts';

/** The counts `session.erased` reports. */
export interface ErasedCounts {
  readonly stateRecordsDeleted: number;
  readonly artifactsDeleted: number;
  readonly memoryPurged: boolean;
}

/**
 * The session events with their exact payload keys. Lifecycle narration is
 * best effort: the catalog is the truth, so a failed publish is logged and
 * the change stands. The erasure receipt is the exception: its publish
 * failure propagates so that the erasure stays unfinished and is retried.
 */
export interface SessionEvents {
  opened(triple: SessionTriple, at: Date): Promise<void>;
  reopened(triple: SessionTriple, at: Date, priorClosedReason: string): Promise<void>;
  touched(triple: SessionTriple, at: Date): Promise<void>;
  /** `session.gc_reaped` then `session.closed`, both with reason `reason`. */
  reaped(triple: SessionTriple, at: Date, reason: string): Promise<void>;
  titleChanged(triple: SessionTriple, source: TitleSource): Promise<void>;
  namingFailed(triple: SessionTriple, errorClass: string): Promise<void>;
  /** Throws when the stream did not take the receipt; `eventId` makes a retry a duplicate. */
  erased(triple: SessionTriple, counts: ErasedCounts, erasedAt: Date, eventId: string): Promise<void>;
}

/** Creates the session events over the service's publisher. */
export function createSessionEvents(publisher: EventPublisher, logger: Logger): SessionEvents {
  async function publish(type: string, triple: SessionTriple, payload: Record<string, unknown>): Promise<void> {
    try {
      await publisher.publish({ type, identity: triple, payload });
    } catch (error) {
      logger.error({ err: error, eventType: type }, 'session event not published');
    }
  }

  return {
    opened: (triple, at) => publish('session.opened', triple, { SessionID: triple.session, OpenedAt: at.getTime() }),
    reopened: (triple, at, prior) =>
      publish('session.reopened', triple, {
        SessionID: triple.session,
        ReopenedAt: at.getTime(),
        PriorClosedReason: prior,
      }),
    touched: (triple, at) => publish('session.touched', triple, { SessionID: triple.session, LastSeen: at.getTime() }),
    async reaped(triple, at, reason) {
      await publish('session.gc_reaped', triple, { SessionID: triple.session, ReapedAt: at.getTime(), Reason: reason });
      await publish('session.closed', triple, { SessionID: triple.session, ClosedAt: at.getTime(), Reason: reason });
    },
    titleChanged: (triple, source) =>
      publish('session.title_changed', triple, { SessionID: triple.session, Source: source }),
    namingFailed: (triple, errorClass) =>
      publish('session.naming_failed', triple, { SessionID: triple.session, ErrorClass: errorClass }),
    async erased(triple, counts, erasedAt, eventId) {
      await publisher.publish({
        type: 'session.erased',
        identity: triple,
        eventId,
        occurredAt: erasedAt,
        payload: {
          SessionID: triple.session,
          StateRecordsDeleted: counts.stateRecordsDeleted,
          ArtifactsDeleted: counts.artifactsDeleted,
          MemoryPurged: counts.memoryPurged,
          ErasedAt: erasedAt.getTime(),
        },
      });
    },
  };
}

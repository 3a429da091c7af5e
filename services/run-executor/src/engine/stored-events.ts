import { decodeStoredEvent, encodeToken, eventFilterSubject, readEvents } from '@ars/bus';
import type { Bus } from '@ars/bus';

/** The identity of every event of a run. */
export interface RunIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run: string;
}

/**
 * Which of a run's events the EVENTS stream holds from a sequence on: what
 * a run asks after publishes whose acknowledgement never came (nats-server
 * down or restarting), to publish again only those the stream does not have.
 * One bounded read of the session's subjects (a filtered, memory-backed
 * consumer, deleted after the read), keeping the run's event ids. A read
 * that stops getting messages (its consumer gone with a restarting server)
 * throws `unavailable` after {@link STORED_READ_STALL_MS}, and the run asks again.
 */
export type StoredEventIds = (identity: RunIdentity, fromSequence: number) => Promise<ReadonlySet<string>>;

/**
 * How long the read waits for its next message before it is made again: a
 * few of a run's events, read while the run waits, so shorter than the
 * default (a read made just after a restart sometimes never delivers).
 */
const STORED_READ_STALL_MS = 3_000;

export function createStoredEventIds(bus: Bus): StoredEventIds {
  return async (identity, fromSequence) => {
    const runToken = encodeToken(identity.run);
    const reader = await readEvents(bus, {
      filterSubject: eventFilterSubject({ tenant: identity.tenant, user: identity.user, session: identity.session }),
      startSequence: Math.max(1, fromSequence),
      stallMs: STORED_READ_STALL_MS,
    });
    const ids = new Set<string>();
    try {
      for await (const record of reader) {
        if (record.runToken === runToken) ids.add(decodeStoredEvent(record.data).id);
      }
    } finally {
      await reader.close();
    }
    return ids;
  };
}

import { ServiceError } from '@ars/contracts';
import { EVENTS_STREAM } from '@ars/bus';
import type { Bus } from '@ars/bus';

/**
 * The EVENTS stream's last sequence, read BEFORE a snapshot's store read:
 * the `sequence` member of `tasks.get`, `tasks.list` and `pause.list`.
 *
 * Why before, and what it guarantees. Every writer of the run-executor (the
 * API side and the engine) writes the store first and publishes the event
 * after the write resolved, so for every event, its store effect
 * happens-before its stream sequence exists. Let S be the sequence read here
 * and R the store read that follows.
 *
 * - Nothing is missed: an event with sequence ≤ S was published before S was
 *   read, so its effect was written before R and is in the snapshot; every
 *   event after S is delivered to a client that subscribes with
 *   `Last-Event-ID: S` (the stream resumes strictly after it).
 * - Nothing is applied twice: events after S are either not yet in the
 *   snapshot, or (for a write that landed between S and R) already in it.
 *   The run-executor's snapshot rows are made of absolute values (a status, a
 *   goal, a priority, a pause keyed by its token), so re-applying such an
 *   event leaves the row as it is.
 *   Reading S after R instead would lose the first property (a write
 *   between R and S would be neither in the snapshot nor replayed), which
 *   no client can repair, while the second is repaired by idempotence.
 */
export async function readSnapshotSequence(bus: Bus): Promise<number> {
  try {
    const info = await bus.jsm.streams.info(EVENTS_STREAM);
    return info.state.last_seq;
  } catch (error) {
    throw new ServiceError('unavailable', 'the event stream did not report its sequence', { cause: error });
  }
}

import { DeliverPolicy, EVENTS_STREAM, decodeEventMessage, eventFilterSubject } from '@ars/bus';
import type { Bus, EventFilter } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';

/**
 * Every stored event matching `filter`, in stream order. Publishers await the
 * stream's acknowledgement before answering, so after a call returns its
 * events are already here: no waiting.
 */
export async function readEvents(bus: Bus, filter: EventFilter): Promise<EventFrame[]> {
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
    filter_subjects: eventFilterSubject(filter),
    deliver_policy: DeliverPolicy.All,
  });
  const { num_pending: pending } = await consumer.info(true);
  const frames: EventFrame[] = [];
  while (frames.length < pending) {
    const msg = await consumer.next({ expires: 5_000 });
    if (msg === null) throw new Error(`expected ${pending} events, read ${frames.length}`);
    frames.push(decodeEventMessage(msg));
  }
  await consumer.delete().catch(() => undefined);
  return frames;
}

import { DeliverPolicy, EVENTS_STREAM, decodeEventMessage, eventFilterSubject } from '@ars/bus';
import type { Bus, EventFilter } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';

/**
 * Reads every stored event matching `filter` after sequence `after` through
 * an ordered consumer, in stream order: what a client subscribing with
 * `Last-Event-ID: after` would get now. Call it once the write under test
 * resolved (each write publishes before it answers).
 */
export async function readEvents(bus: Bus, filter: EventFilter, after = 0): Promise<EventFrame[]> {
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
    filter_subjects: eventFilterSubject(filter),
    ...(after === 0
      ? { deliver_policy: DeliverPolicy.All }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 }),
  });
  const { num_pending: pending } = await consumer.info(true);
  const frames: EventFrame[] = [];
  while (frames.length < pending) {
    const msg = await consumer.next({ expires: 5_000 });
    if (msg === null) throw new Error(`expected ${pending} events, read ${frames.length}`);
    frames.push(decodeEventMessage(msg));
  }
  return frames;
}

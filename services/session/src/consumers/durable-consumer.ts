import { AckPolicy, DeliverPolicy, EVENTS_STREAM, decodeEventMessage } from '@ars/bus';
import type { Bus, ConsumerMessages, JsMsg } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';
import { isServiceError } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { withConsumerSpan } from './consumer-span.ts';

/** Handles one event; a throw is retried with backoff (then the message is terminated). */
export type EventHandler = (frame: EventFrame) => Promise<void>;

/** Options of {@link startDurableConsumer}. */
export interface DurableConsumerOptions {
  readonly bus: Bus;
  readonly logger: Logger;
  /** Durable name, shared by every replica of the service. */
  readonly durable: string;
  /** One subject filter (nats-server 2.9 takes one). */
  readonly filterSubject: string;
  readonly handle: EventHandler;
  /** Deliveries before a failing message is terminated and reported. @default 8 */
  readonly maxAttempts?: number;
  /**
   * The ordering key of an event: events with one key are handled one at a
   * time in stream order, events with different keys at the same time (up
   * to {@link MAX_IN_FLIGHT}). Without it every event waits for the one
   * before it.
   */
  readonly orderingKey?: (frame: EventFrame) => string;
}

/** A running consumer. */
export interface RunningConsumer {
  /** Stops pulling and waits for the message in hand. */
  stop(): Promise<void>;
}

const ACK_WAIT_MS = 60_000;
/**
 * Messages pulled ahead of those in hand. Their ack timers run while they
 * wait, and one message may take a few seconds (a `tasks.get` call), so the
 * buffer stays small enough to finish within {@link ACK_WAIT_MS}.
 */
const PULL_BATCH = 32;

/**
 * Events handled at once when the consumer has an ordering key. A busy
 * system has a few dozen runs going at once; handling their events side by
 * side lets each one's store writes share a commit (see the sqlite engine's
 * group commit) instead of waiting for the one before to finish.
 */
export const MAX_IN_FLIGHT = 16;
const NANOS_PER_MS = 1_000_000;

/** Redelivery delay after the n-th failed attempt: 0.5 s doubling up to 30 s. */
function backoffMs(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
}

/**
 * Creates the durable consumer, or finds it. One whose filter subject is not
 * the one asked for (created by a build with another event subject layout)
 * is replaced by one that starts after its acknowledged floor, so no event
 * is handled twice and none is skipped; nats-server 2.9 cannot change a
 * consumer's filter in place.
 */
export async function ensureConsumer(options: DurableConsumerOptions): Promise<void> {
  const { jsm } = options.bus;
  let startSequence: number | undefined;
  try {
    const info = await jsm.consumers.info(EVENTS_STREAM, options.durable);
    if (info.config.filter_subject === options.filterSubject) return;
    startSequence = info.ack_floor.stream_seq + 1;
    options.logger.warn(
      { consumer: options.durable, from: info.config.filter_subject, to: options.filterSubject, startSequence },
      'durable consumer has another filter subject; replacing it from its acknowledged floor',
    );
    await jsm.consumers.delete(EVENTS_STREAM, options.durable);
  } catch (error) {
    // Not there yet (or the lookup failed): create it; a real failure surfaces below.
    if (startSequence !== undefined) throw error;
  }
  await jsm.consumers.add(EVENTS_STREAM, {
    durable_name: options.durable,
    filter_subject: options.filterSubject,
    ack_policy: AckPolicy.Explicit,
    ...(startSequence === undefined
      ? { deliver_policy: DeliverPolicy.All }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSequence }),
    ack_wait: ACK_WAIT_MS * NANOS_PER_MS,
    max_deliver: -1,
  });
}

/**
 * The acknowledgement decision, in one place: success acks; a failure naks
 * with backoff until `maxAttempts` deliveries, then terminates the message
 * and logs it (a poison message must not stall the session history); a
 * message that is not an event at all is terminated at once.
 */
async function settle(
  msg: JsMsg,
  frame: EventFrame,
  options: DurableConsumerOptions,
  maxAttempts: number,
): Promise<void> {
  try {
    await withConsumerSpan(msg, frame, options.durable, () => options.handle(frame));
    msg.ack();
  } catch (error) {
    const attempt = msg.info.deliveryCount;
    const fields = { err: error, sequence: msg.seq, eventType: frame.type, attempt, consumer: options.durable };
    if (attempt >= maxAttempts || (isServiceError(error) && !error.retryable && error.status < 500)) {
      options.logger.error(fields, 'event handling failed; message terminated');
      msg.term('handling failed');
      return;
    }
    options.logger.warn(fields, 'event handling failed; will retry');
    msg.nak(backoffMs(attempt));
  }
}

/** The event a message carries; a message that is not one is terminated (undefined). */
function decode(msg: JsMsg, options: DurableConsumerOptions): EventFrame | undefined {
  try {
    return decodeEventMessage(msg);
  } catch (error) {
    options.logger.error({ err: error, sequence: msg.seq, consumer: options.durable }, 'malformed event terminated');
    msg.term('malformed event');
    return undefined;
  }
}

/**
 * Hands each message to `handle` in stream order per ordering key, at most
 * {@link MAX_IN_FLIGHT} at once; resolves once every message of `messages`
 * was handled.
 */
async function dispatchByKey(
  messages: ConsumerMessages,
  orderingKey: (frame: EventFrame) => string,
  handle: (msg: JsMsg, frame: EventFrame) => Promise<void>,
  options: DurableConsumerOptions,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  /** The last message in hand per key: the next one of that key waits for it. */
  const tails = new Map<string, Promise<void>>();
  for await (const msg of messages) {
    const frame = decode(msg, options);
    if (frame === undefined) continue;
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const key = orderingKey(frame);
    const before = tails.get(key);
    const run = () =>
      handle(msg, frame).catch((error: unknown) =>
        options.logger.error({ err: error, sequence: msg.seq, consumer: options.durable }, 'settling failed'),
      );
    const handled = before === undefined ? run() : before.then(run);
    tails.set(key, handled);
    inFlight.add(handled);
    void handled.then(() => {
      inFlight.delete(handled);
      if (tails.get(key) === handled) tails.delete(key);
    });
  }
  await Promise.all(inFlight);
}

/**
 * Consumes the EVENTS stream through a durable pull consumer (created on
 * first start, delivering from the first retained event): one message at a
 * time in stream order, or, with an ordering key, in stream order per key.
 */
export async function startDurableConsumer(options: DurableConsumerOptions): Promise<RunningConsumer> {
  const maxAttempts = options.maxAttempts ?? 8;
  await ensureConsumer(options);
  const consumer = await options.bus.js.consumers.get(EVENTS_STREAM, options.durable);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: PULL_BATCH });
  const handle = (msg: JsMsg, frame: EventFrame) => settle(msg, frame, options, maxAttempts);
  const { orderingKey } = options;
  const loop = (async () => {
    if (orderingKey !== undefined) return dispatchByKey(messages, orderingKey, handle, options);
    for await (const msg of messages) {
      const frame = decode(msg, options);
      if (frame !== undefined) await handle(msg, frame);
    }
  })().catch((error: unknown) => options.logger.error({ err: error, consumer: options.durable }, 'consumer stopped'));
  return {
    async stop() {
      await messages.close();
      await loop;
    },
  };
}

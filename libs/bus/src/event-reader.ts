import { setTimeout as sleep } from 'node:timers/promises';
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, ReplayPolicy } from '@nats-io/jetstream';
import type { ConsumerConfig, ConsumerInfo, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { ServiceError } from '@ars/contracts';
import { isConnectionUp } from './connection.ts';
import type { Bus } from './connection.ts';
import { addEphemeralConsumer } from './ephemeral-consumer.ts';
import { EVENTS_STREAM } from './infrastructure.ts';
import { EMPTY_TOKEN, EVENT_RUN_HEADER, EVENT_SUBJECT_PREFIX } from './subjects.ts';
import { headerOf } from './incoming-headers.ts';
import { MESSAGE_ID_HEADER } from './stream-publish.ts';

/**
 * Reading the EVENTS stream without decoding it: the gateway's live tail
 * (one ordered consumer per process) and bounded range reads (one ephemeral
 * pull consumer per read, deleted when the read ends). Records carry the raw
 * subject and body so that a reader routes by subject and decodes only what
 * it delivers.
 */

/** One message of the EVENTS stream as read, before decoding. */
export interface EventRecord {
  /** The stream sequence: the frame's `sequence` and the SSE `id:`. */
  readonly seq: number;
  /** `ars.ev.<tenant>.<user>.<session>.<type…>` (see `parseEventSubject`). */
  readonly subject: string;
  /** The run as its encoded token (`EVENT_RUN_HEADER`), `_` for an event of no run. */
  readonly runToken: string;
  /** The stored JSON body (see `decodeStoredEvent`). */
  readonly data: Uint8Array;
  /** When the stream stored the message, in epoch milliseconds. */
  readonly storedAtMs: number;
  /**
   * Messages matching the read's filter stored after this one, counted by the
   * server when it delivered this one. 0 means the read had reached the end.
   */
  readonly pending: number;
}

/** The retained range of the EVENTS stream. */
export interface EventStreamBounds {
  /** First retained sequence; `lastSeq + 1` when the stream holds nothing. */
  readonly firstSeq: number;
  /** Last sequence ever stored (0 for a new stream). */
  readonly lastSeq: number;
  /** Messages retained. */
  readonly messages: number;
  /** Stored time of the first retained message, epoch ms; absent when empty. */
  readonly firstStoredAtMs?: number;
}

/** Subject filter of the whole EVENTS stream. */
export const ALL_EVENTS_FILTER = `${EVENT_SUBJECT_PREFIX}.>`;

/** How long an abandoned read consumer lives on the server (a crashed reader never deletes its own). */
const READ_INACTIVE_THRESHOLD_MS = 30_000;
/** Default pull batch of range reads and of the tail. */
const DEFAULT_BATCH = 512;
/** Pull expiry of the tail; its idle heartbeat is half of it, so a lost server is noticed within seconds. */
const TAIL_EXPIRES_MS = 5_000;
/** How long a range read may wait for its next message before it gives up (two pull expiries). */
export const READ_STALL_MS = 2 * TAIL_EXPIRES_MS;
/**
 * Idle heartbeat of the tail's pulls: two missed in a row (about 2 s) mean
 * its consumer is gone (its node died, or it was placed on a node that is
 * down), and the tail opens a new one after the last sequence it delivered.
 */
const TAIL_HEARTBEAT_MS = 1_000;

function toRecord(msg: JsMsg): EventRecord {
  const info = msg.info;
  return {
    seq: info.streamSequence,
    subject: msg.subject,
    runToken: headerOf(msg, EVENT_RUN_HEADER) || EMPTY_TOKEN,
    data: msg.data,
    storedAtMs: Math.floor(info.timestampNanos / 1_000_000),
    pending: info.pending,
  };
}

/** The EVENTS stream's first and last sequence, read from the stream info. */
export async function eventStreamBounds(bus: Bus): Promise<EventStreamBounds> {
  const info = await bus.jsm.streams.info(EVENTS_STREAM);
  const { first_seq: firstSeq, last_seq: lastSeq, messages, first_ts: firstTs } = info.state;
  const empty = messages === 0;
  return {
    firstSeq: empty ? lastSeq + 1 : firstSeq,
    lastSeq,
    messages,
    ...(empty || firstTs === undefined ? {} : { firstStoredAtMs: Date.parse(firstTs) }),
  };
}

/**
 * The `Nats-Msg-Id` (the event id of a deduplicated publish) of the EVENTS
 * message at `seq`: `null` when the stream holds no message there (never
 * stored, deleted, aged out, or lost by a failover after its publish was
 * acknowledged), `undefined` when the message carries no id.
 */
export async function storedEventIdAt(bus: Bus, seq: number): Promise<string | null | undefined> {
  const message = await bus.jsm.streams.getMessage(EVENTS_STREAM, { seq });
  if (message === null) return null;
  return message.header?.get(MESSAGE_ID_HEADER) || undefined;
}

/** Where the stream's leader holds a message (see {@link nextStoredEvent}). */
export interface StoredPosition {
  readonly seq: number;
  /** When the stream stored it, in epoch milliseconds. */
  readonly storedAtMs: number;
}

/**
 * The first EVENTS message at or after `fromSeq` matching `filterSubject`,
 * as the stream's leader holds it (`STREAM.MSG.GET` with `next_by_subj`);
 * `undefined` when there is none. A read's consumer may sit on a replica
 * still catching up after a restart (nats-server before 2.12 places an
 * ephemeral consumer on any peer of the stream, nats-server#7165) and count
 * nothing where the leader holds more: this tells the two apart.
 */
export async function nextStoredEvent(
  bus: Bus,
  filterSubject: string,
  fromSeq: number,
): Promise<StoredPosition | undefined> {
  const query = { seq: Math.max(1, fromSeq), next_by_subj: filterSubject };
  // `next_by_subj` is part of the server's request (2.9+), not of the client's type for this call.
  const message = await bus.jsm.streams.getMessage(EVENTS_STREAM, query as unknown as { seq: number });
  return message === null ? undefined : { seq: message.seq, storedAtMs: message.time.getTime() };
}

/** How often a read asks again while the stream's leader holds records its reads do not deliver. */
export const LAGGING_REPLICA_RETRY_MS = 100;
/** How many times it does before failing `unavailable`: a replica catches up within about a second. */
export const LAGGING_REPLICA_RETRIES = 20;
/**
 * How far the servers' clocks may disagree: a record the leader stored up to
 * this long after the read's consumer was created is read; later ones were
 * stored after the read began and are not part of it.
 */
const CLOCK_SKEW_MARGIN_MS = 1_000;

/** Options of {@link readEvents}. */
export interface ReadEventsOptions {
  /** A subject filter (`eventFilterSubject`); @default every event (`ars.ev.>`). */
  readonly filterSubject?: string;
  /** First sequence to read; beyond the stream's start the read starts at its first retained message. */
  readonly startSequence?: number;
  /** Read from the first message stored at or after this instant (ignored when `startSequence` is given). */
  readonly startTime?: Date;
  /** Messages per pull. @default 512 */
  readonly batch?: number;
  /** How long the read waits for its next message before it throws `unavailable`, in ms. @default {@link READ_STALL_MS} */
  readonly stallMs?: number;
  /**
   * Whether the read's end is confirmed with the stream's leader (see
   * {@link readEvents}); off for a caller that confirms it itself. @default true
   */
  readonly confirmEnd?: boolean;
  /** Where the leader holds the next matching record; for tests. @default {@link nextStoredEvent} */
  readonly leader?: (filterSubject: string, fromSeq: number) => Promise<StoredPosition | undefined>;
}

/**
 * A bounded read: iterates the matching messages from its start until the
 * first one delivered with `pending` 0 (the end of the stream when it was
 * delivered), then ends. `close()` may be called at any time, also to stop
 * early; it deletes the server-side consumer. While the connection is down
 * the read is refused at once (`unavailable`). A read that stops getting
 * messages before that end (its consumer gone with a restarting server,
 * pulls unanswered) throws ServiceError `unavailable` after `stallMs`
 * rather than waiting for ever or ending as if it had read everything.
 */
export interface EventRangeReader extends AsyncIterable<EventRecord> {
  /**
   * Matching messages from the start as the read's consumer counted them when the read began. 0 means the
   * iteration yields nothing, unless the consumer sat on a replica still catching up (see `confirmEnd`).
   */
  readonly pendingAtStart: number;
  close(): Promise<void>;
}

function readConfig(options: ReadEventsOptions): Partial<ConsumerConfig> {
  const position =
    options.startSequence !== undefined
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, options.startSequence) }
      : options.startTime !== undefined
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.startTime.toISOString() }
        : { deliver_policy: DeliverPolicy.All };
  return {
    ...position,
    // One subject, never an array: nats-server 2.9 takes a single filter.
    filter_subject: options.filterSubject ?? ALL_EVENTS_FILTER,
    ack_policy: AckPolicy.None,
    replay_policy: ReplayPolicy.Instant,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: nanos(READ_INACTIVE_THRESHOLD_MS),
  };
}

/**
 * How long a range read waits for its next message before it asks the server
 * whether its consumer still has anything to deliver (see {@link readEvents}).
 */
const READ_PROBE_MS = 250;

/**
 * True when a delivery's pending count fell by more than the one message it
 * delivered: messages the read had counted are gone. Either a purge deleted
 * them, or (nats-server before 2.9.15, nats-server#3838) a purge of any
 * subject its filter covers moved the consumer to the end of the stream,
 * skipping them; only a fresh consumer tells which.
 */
function countFell(previousPending: number | undefined, record: EventRecord): boolean {
  return previousPending !== undefined && record.pending < previousPending - 1;
}

/**
 * Opens a bounded read of the EVENTS stream through an ephemeral pull
 * consumer (no acks, memory storage). The consumer is created before this
 * resolves, so `pendingAtStart` and every later `pending` count messages
 * stored up to at least that moment.
 *
 * A purge under way (a session erasure) can cut the consumer short: its
 * pending count falls by more than one, or it stops delivering while the
 * server counts nothing left for it. The read then opens a fresh consumer
 * after the last record it delivered, whose count comes from the stored
 * messages, and goes on; a record the cut consumer delivered out of order
 * is not handed out. Reads cut short again and again without delivering
 * anything for `stallMs` fail `unavailable`, as a stalled read does.
 *
 * The end a consumer counts is confirmed with the stream's leader
 * (`confirmEnd`): a consumer placed on a replica still catching up after a
 * restart counts nothing where the leader holds more. While the leader holds
 * a matching record after the last one delivered, stored before the read
 * began, the read opens a fresh consumer there every
 * {@link LAGGING_REPLICA_RETRY_MS}, and fails `unavailable` after
 * {@link LAGGING_REPLICA_RETRIES} tries that deliver nothing, rather than end
 * short. Records stored after the read began do not extend it. The end of a
 * read that starts at a time and delivered nothing is not confirmed (it has
 * no sequence to ask from).
 */
export async function readEvents(bus: Bus, options: ReadEventsOptions = {}): Promise<EventRangeReader> {
  // Asked while the connection is down, creating the consumer would wait out its request timeout for nothing.
  if (!isConnectionUp(bus.nc)) throw new ServiceError('unavailable', 'no connection to nats-server');
  const first = await addEphemeralConsumer(bus, EVENTS_STREAM, readConfig(options));
  const batch = options.batch ?? DEFAULT_BATCH;
  const stallMs = options.stallMs ?? READ_STALL_MS;
  let consumerName = first.name;
  let messages: ConsumerMessages | undefined;
  let closed: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closed ??= (async () => {
      messages?.stop();
      // An ephemeral consumer not deleted (JetStream away) goes by itself after its inactivity threshold.
      await bus.jsm.consumers.delete(EVENTS_STREAM, consumerName).catch(() => undefined);
    })();
    return closed;
  };

  /** How one consumer's delivery ended: the read's end, or cut short by a purge. */
  type SegmentEnd = 'end' | 'cut';
  const progress: { last: number | undefined } = { last: undefined };

  async function* segment(info: ConsumerInfo): AsyncGenerator<EventRecord, SegmentEnd, undefined> {
    messages = await bus.js.consumers
      .getConsumerFromInfo(info)
      .consume({ max_messages: batch, expires: TAIL_EXPIRES_MS });
    // Closed while the pull was being set up: the consumer is already gone.
    if (closed !== undefined) {
      messages.stop();
      return 'end';
    }
    const current = messages;
    // One timer for the whole read, counting only the time spent waiting for the server (not a slow caller).
    let waitingSince: number | undefined = Date.now();
    let stalled = false;
    let cut = false;
    // The first record counts the ones after it: one fewer than the consumer counted at its creation.
    let pending: number | undefined = info.num_pending;
    const probe = async (): Promise<void> => {
      const state = await bus.jsm.consumers.info(EVENTS_STREAM, info.name).catch(() => undefined);
      // A consumer that is gone is left to the stall; one that counts nothing left was cut short.
      if (state !== undefined && state.num_pending === 0 && waitingSince !== undefined) {
        cut = true;
        current.stop();
      }
    };
    let probedAt = 0;
    const tick = Math.max(1, Math.min(READ_PROBE_MS, stallMs) / 2);
    const watch = (): NodeJS.Timeout =>
      setTimeout(() => {
        watchdog = watch();
        if (waitingSince === undefined) return;
        const now = Date.now();
        if (now - waitingSince >= stallMs) {
          stalled = true;
          current.stop();
        } else if (now - waitingSince >= READ_PROBE_MS && now - probedAt >= READ_PROBE_MS) {
          probedAt = now;
          void probe();
        }
      }, tick);
    let watchdog = watch();
    try {
      for await (const msg of current) {
        waitingSince = undefined;
        const record = toRecord(msg);
        if (countFell(pending, record)) {
          cut = true;
          break;
        }
        pending = record.pending;
        progress.last = record.seq;
        yield record;
        if (record.pending === 0) return 'end';
        waitingSince = Date.now();
      }
    } finally {
      clearTimeout(watchdog);
      current.stop();
    }
    if (closed !== undefined) return 'end';
    if (cut) return 'cut';
    throw new ServiceError(
      'unavailable',
      stalled
        ? `the event stream read got no message for ${stallMs} ms before its end`
        : 'the event stream read ended before its end',
    );
  }

  const filterSubject = options.filterSubject ?? ALL_EVENTS_FILTER;
  const leader = options.leader ?? ((filter: string, from: number) => nextStoredEvent(bus, filter, from));
  // The server's clock when the read began: records the leader stored later are not part of the read.
  const beganAtMs = Date.parse(first.created);

  /** Whether the leader holds a record of the read past the last one delivered. */
  async function leaderHoldsMore(): Promise<boolean> {
    if (options.confirmEnd === false) return false;
    const from =
      progress.last !== undefined
        ? progress.last + 1
        : (options.startSequence ?? (options.startTime === undefined ? 1 : undefined));
    if (from === undefined) return false;
    let next: StoredPosition | undefined;
    try {
      next = await leader(filterSubject, from);
    } catch (error) {
      throw new ServiceError('unavailable', 'the event stream read could not confirm its end with the leader', {
        cause: error,
      });
    }
    return next !== undefined && !(next.storedAtMs > beganAtMs + CLOCK_SKEW_MARGIN_MS);
  }

  async function* iterate(): AsyncGenerator<EventRecord, void, undefined> {
    let info: ConsumerInfo = first;
    let progressedAt = Date.now();
    let lagging = 0;
    for (;;) {
      if (closed !== undefined) return;
      const before = progress.last;
      const end: SegmentEnd = info.num_pending === 0 ? 'end' : yield* segment(info);
      if (closed !== undefined) return;
      if (progress.last !== before) {
        progressedAt = Date.now();
        lagging = 0;
      }
      if (end === 'end') {
        if (!(await leaderHoldsMore())) return;
        if (++lagging > LAGGING_REPLICA_RETRIES) {
          throw new ServiceError('unavailable', 'the event stream is catching up after a restart of a NATS node');
        }
        await sleep(LAGGING_REPLICA_RETRY_MS);
        if (closed !== undefined) return;
      } else if (progress.last === before && Date.now() - progressedAt >= stallMs) {
        throw new ServiceError('unavailable', `the event stream read was cut short by purges for ${stallMs} ms`);
      }
      const cutName = info.name;
      const restart = progress.last === undefined ? options : { ...options, startSequence: progress.last + 1 };
      info = await addEphemeralConsumer(bus, EVENTS_STREAM, readConfig(restart));
      consumerName = info.name;
      void bus.jsm.consumers.delete(EVENTS_STREAM, cutName).catch(() => undefined);
    }
  }

  return {
    pendingAtStart: first.num_pending,
    close,
    [Symbol.asyncIterator]: () => iterate(),
  };
}

/** Options of {@link tailEvents}. */
export interface TailEventsOptions {
  /** First sequence delivered (the last one already seen + 1). */
  readonly startSequence: number;
  /** Messages per pull. @default 512 */
  readonly batch?: number;
}

/** The live tail: every message of the stream in sequence order, until closed. */
export interface EventTail extends AsyncIterable<EventRecord> {
  close(): Promise<void>;
}

/**
 * Follows the whole EVENTS stream from `startSequence` through an ephemeral
 * consumer that it replaces whenever it stops answering, resuming after the
 * last sequence it delivered, so the tail has no gap and no duplicate:
 * - on a reconnect (the consumer went with a restarted server);
 * - when two idle heartbeats are missed (its node died while this
 *   connection, to another node, stayed up; the client's own ordered
 *   consumer took 20 s and more to notice and recreate on a 3-node cluster);
 * - when a delivery is skipped (a dropped pull batch), as an ordered
 *   consumer would;
 * - when its pending count falls by more than one, or it idles (a server
 *   heartbeat) while its last delivery counted more to come: a purge moved
 *   it ahead (see {@link countFell}).
 * Creating the replacement tries again while a node is down
 * ({@link addEphemeralConsumer}); when that fails (JetStream still
 * recovering), iteration throws and the caller opens the tail again from
 * where it got to.
 */
export async function tailEvents(bus: Bus, options: TailEventsOptions): Promise<EventTail> {
  const batch = options.batch ?? DEFAULT_BATCH;
  let next = Math.max(1, options.startSequence);
  let closed = false;
  interface Live {
    readonly name: string;
    readonly messages: ConsumerMessages;
    /** Set when the consumer is to be replaced rather than the iteration ended. */
    replace: boolean;
    /** The pending count of the last record it delivered. */
    pending: number;
  }
  const open = async (): Promise<Live> => {
    const info = await addEphemeralConsumer(bus, EVENTS_STREAM, readConfig({ startSequence: next }));
    const messages = await bus.js.consumers
      .getConsumerFromInfo(info)
      .consume({ max_messages: batch, expires: TAIL_EXPIRES_MS, idle_heartbeat: TAIL_HEARTBEAT_MS });
    const opened: Live = { name: info.name, messages, replace: false, pending: 0 };
    void (async () => {
      for await (const status of messages.status()) {
        // An idle heartbeat while the last delivery counted more to come: a purge moved the consumer past them.
        const cut = status.type === 'heartbeat' && opened.pending > 0;
        if (status.type !== 'heartbeats_missed' && !cut) continue;
        opened.replace = true;
        messages.stop();
        return;
      }
      // The status iterator ends, or fails, only once the consumer is stopped: nothing is left to watch.
    })().catch(() => undefined);
    return opened;
  };
  let live = await open();
  void (async () => {
    // Ends at the first status change after the tail is closed.
    for await (const status of bus.nc.status()) {
      if (closed) return;
      if (status.type !== 'reconnect') continue;
      live.replace = true;
      live.messages.stop();
    }
    // The connection's status iterator ends, or fails, only once it is closed: nothing is left to watch.
  })().catch(() => undefined);
  async function* iterate(): AsyncGenerator<EventRecord, void, undefined> {
    while (!closed) {
      let delivered = 0;
      let pending: number | undefined;
      const current = live;
      for await (const msg of current.messages) {
        if (msg.info.deliverySequence !== delivered + 1) {
          // A delivery went missing: read again after the last sequence delivered.
          live.replace = true;
          break;
        }
        delivered = msg.info.deliverySequence;
        const record = toRecord(msg);
        if (countFell(pending, record)) {
          // Counted messages are gone: purged, or skipped by a purge (see countFell). Read again after `next`.
          live.replace = true;
          break;
        }
        pending = current.pending = record.pending;
        if (record.seq < next) continue;
        next = record.seq + 1;
        yield record;
      }
      if (closed || !live.replace) return;
      const replaced = live;
      replaced.messages.stop();
      // Not awaited: its node may be the one that is gone; its inactivity threshold removes it then.
      void bus.jsm.consumers.delete(EVENTS_STREAM, replaced.name).catch(() => undefined);
      live = await open();
    }
  }
  return {
    async close() {
      closed = true;
      live.messages.stop();
      // An ephemeral consumer not deleted (JetStream away) goes by itself after its inactivity threshold.
      await bus.jsm.consumers.delete(EVENTS_STREAM, live.name).catch(() => undefined);
    },
    [Symbol.asyncIterator]: () => iterate(),
  };
}

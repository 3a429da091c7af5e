import { setTimeout as sleep } from 'node:timers/promises';
import type { VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { ADMIN_SCOPE_USED } from '../http/audit.ts';
import type { EventLog, EventLogRead, EventSink } from '../ports.ts';
import type { EventHub } from './event-hub.ts';
import { recordText } from './sse-frames.ts';
import { watchAuthority } from './stream-authority.ts';
import type { StreamAuthority } from './stream-authority.ts';
import { matches, routeOf } from './stream-filter.ts';
import type { StreamFilter } from './stream-filter.ts';
import type { SseSink, Subscriber } from './subscriber.ts';

/** One subscription as the route validated it. */
export interface StreamRequest {
  readonly identity: VerifiedIdentity;
  readonly filter: StreamFilter;
  /** `admin=1`: the caller holds admin or console:fleet (checked by the route). */
  readonly admin: boolean;
  /** `Last-Event-ID`: resume strictly after this sequence. */
  readonly lastEventId: number | undefined;
  /** The token that opened the stream: it is closed when the token expires or is revoked. */
  readonly authority: StreamAuthority;
}

/** What {@link EventStream} needs. */
export interface EventStreamOptions {
  readonly hub: EventHub;
  readonly log: EventLog;
  readonly events: EventSink;
  readonly logger: Logger;
  /** How long a replay keeps reading again after a failed read, in ms. @default {@link REPLAY_RETRY_MS} */
  readonly replayRetryMs?: number;
  /** Wall clock in epoch ms (when a token expires). @default Date.now */
  readonly now?: () => number;
}

/** How long a replay keeps reading again after a failed read (nats-server restarting). */
export const REPLAY_RETRY_MS = 60_000;
/** Waits between those reads: from the first to the last, then the last again. */
const REPLAY_BACKOFF_MS = [100, 250, 500, 1_000, 2_000];

/**
 * Serves one SSE subscription: replays the backlog after `Last-Event-ID`
 * from JetStream (only the subscriber's subject filter, read at the client's
 * pace), then hands over to the hub's live fan-out. The hub attaches the
 * subscriber before each read, so the read needs to reach only the hub's
 * position at that moment; events after it are held and delivered after the
 * backlog, deduplicated by sequence. A read that fails (nats-server
 * restarting: its consumer gone, the read stalled) is opened again after the
 * last record it read, for up to `replayRetryMs`, so the client keeps its
 * connection and misses nothing. The subscription ends when the token that
 * opened it expires or is revoked (see `watchAuthority`).
 */
export class EventStream {
  readonly #options: EventStreamOptions;

  constructor(options: EventStreamOptions) {
    this.#options = options;
  }

  /** Streams until the client leaves or the subscription is closed; never throws. */
  async serve(sink: SseSink, request: StreamRequest): Promise<void> {
    const { identity } = request;
    const address = { tenant: identity.tenant, user: identity.user, session: identity.session };
    const subscriber = this.#options.hub.subscriber(request.filter, address, sink);
    const unwatch = watchAuthority(subscriber, request.authority, this.#options.now ?? Date.now);
    sink.once('close', unwatch);
    if (request.admin) await this.#audit(subscriber);
    try {
      await this.#deliver(subscriber, request.lastEventId);
    } catch (error) {
      this.#options.logger.warn(
        { err: error, subscriberId: subscriber.id, cursor: subscriber.cursor },
        'event subscription failed; closing it (the client resumes with Last-Event-ID)',
      );
      subscriber.close('failed');
    }
  }

  async #deliver(subscriber: Subscriber, lastEventId: number | undefined): Promise<void> {
    const { hub, log } = this.#options;
    if (lastEventId === undefined || lastEventId >= hub.position) {
      const position = hub.attach(subscriber);
      subscriber.cursor = lastEventId ?? position;
      subscriber.goLive(subscriber.cursor);
      return;
    }
    subscriber.cursor = lastEventId;
    let scanned = lastEventId;
    const bounds = await log.bounds();
    if (lastEventId + 1 < bounds.firstSeq) {
      subscriber.missed(lastEventId + 1, bounds.firstSeq - 1);
      scanned = bounds.firstSeq - 1;
    }
    let failedSince: number | undefined;
    for (let attempt = 0; ;) {
      if (subscriber.closed) return;
      const anchor = hub.attach(subscriber);
      try {
        while (scanned < anchor) {
          const reader = await log.read({ filterSubject: subscriber.filter.subject, startSequence: scanned + 1 });
          subscriber.reader = reader;
          const from = scanned;
          const progress = { last: scanned };
          try {
            await this.#replay(subscriber, reader, anchor, progress);
          } finally {
            scanned = progress.last;
            subscriber.reader = undefined;
            await reader.close();
          }
          if (subscriber.closed) return;
          // A read ends at the first message delivered with a pending count of
          // 0, and JetStream's running count can fall short while the stream is
          // appended to: a read that ended below the anchor is checked by a
          // fresh one, whose count at creation comes from the stored messages.
          // One that delivered nothing has nothing to add.
          if (reader.pendingAtStart === 0 || scanned === from) break;
        }
      } catch (error) {
        if (subscriber.closed) return;
        failedSince ??= Date.now();
        if (Date.now() - failedSince >= (this.#options.replayRetryMs ?? REPLAY_RETRY_MS)) throw error;
        this.#options.logger.warn(
          { err: error, subscriberId: subscriber.id, cursor: subscriber.cursor, scanned, attempt },
          'event replay read failed; reading again after the last record read',
        );
        await sleep(REPLAY_BACKOFF_MS[Math.min(attempt++, REPLAY_BACKOFF_MS.length - 1)]);
        continue;
      }
      failedSince = undefined;
      attempt = 0;
      if (!subscriber.heldOverflowed) {
        subscriber.goLive(Math.max(scanned, anchor));
        return;
      }
      // The live events held during the read overflowed: read on from JetStream and attach anew.
      subscriber.resetHeld();
    }
  }

  /** Writes the backlog up to the anchor (or the end of the stream), keeping the last sequence read in `progress`. */
  async #replay(
    subscriber: Subscriber,
    reader: EventLogRead,
    anchor: number,
    progress: { last: number },
  ): Promise<void> {
    for await (const record of reader) {
      if (subscriber.closed) break;
      progress.last = record.seq;
      const route = routeOf(record);
      if (route !== undefined && matches(subscriber.filter, route)) {
        const text = recordText(record);
        if (text === undefined) {
          this.#options.logger.warn({ sequence: record.seq }, 'undecodable event skipped');
        } else if (subscriber.replayed(record.seq, text)) {
          await subscriber.writable();
        }
      }
      if (record.seq > anchor && !subscriber.heldOverflowed) break;
    }
  }

  /** audit.admin_scope_used, shape 1; best effort: a failure is logged and the subscription proceeds. */
  async #audit(subscriber: Subscriber): Promise<void> {
    const { tenant, user, session } = subscriber.address;
    try {
      await this.#options.events.publish({
        type: ADMIN_SCOPE_USED,
        identity: { tenant, user, session, run: '' },
        payload: { Tenant: tenant, User: user, Session: session, SubscriberID: subscriber.id },
      });
    } catch (error) {
      this.#options.logger.error({ err: error, subscriberId: subscriber.id }, 'audit event could not be published');
    }
  }
}

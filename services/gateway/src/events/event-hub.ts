import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@ars/telemetry';
import { sseClosedCounters } from '../metrics/gateway-metrics.ts';
import type { EventLog, EventLogTail, EventRecord } from '../ports.ts';
import { recordText } from './sse-frames.ts';
import { matches, routeOf } from './stream-filter.ts';
import type { StreamFilter } from './stream-filter.ts';
import { Subscriber } from './subscriber.ts';
import type { SseSink, SubscriberContext } from './subscriber.ts';
import type { NoticeAddress } from './sse-frames.ts';

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  readonly log: EventLog;
  readonly logger: Logger;
  /** Heartbeat comment interval, in ms. */
  readonly heartbeatMs: number;
  /** Idle close after this long without an event, in ms; 0 never. */
  readonly idleCloseMs: number;
  /** Per-subscriber backlog bound, in bytes. */
  readonly maxBufferedBytes: number;
  /** Wall clock in epoch ms. @default Date.now */
  readonly now?: () => number;
}

/** `ars.gateway.sse.subscriptions.closed` by reason. */
const closedCounter = sseClosedCounters();

/** Delay before the tail is reopened after it failed. */
const TAIL_RETRY_MS = 1_000;

/**
 * The live fan-out of one gateway: a single ordered consumer follows the
 * whole EVENTS stream, and each message is routed by its subject to the
 * subscribers of its (tenant, user, session) and to the cross-tenant
 * fan-ins, decoded and rendered once whoever receives it. `position` is the
 * last sequence dispatched: a subscriber attached now receives every event
 * after it, which is how a replay from JetStream hands over to live delivery
 * without gap or duplicate.
 */
export class EventHub {
  readonly #options: EventHubOptions;
  readonly #now: () => number;
  readonly #byKey = new Map<string, Set<Subscriber>>();
  readonly #fanIn = new Set<Subscriber>();
  readonly #all = new Set<Subscriber>();
  readonly #dirty = new Set<Subscriber>();
  #flushScheduled = false;
  #position = 0;
  #nextId = randomInt(1, 2 ** 31);
  #tail: EventLogTail | undefined;
  #sweep: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  readonly #context: SubscriberContext;

  constructor(options: EventHubOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#context = {
      now: this.#now,
      scheduleFlush: (subscriber) => this.#scheduleFlush(subscriber),
      detach: (subscriber) => this.#detach(subscriber),
      closed: (subscriber, reason) => {
        closedCounter(reason).add();
        this.#detach(subscriber);
        this.#all.delete(subscriber);
        this.#dirty.delete(subscriber);
      },
    };
  }

  /** The last stream sequence dispatched to subscribers. */
  get position(): number {
    return this.#position;
  }

  /** Open subscriptions. */
  get size(): number {
    return this.#all.size;
  }

  /** Starts following the stream after its current last sequence. */
  async start(): Promise<void> {
    if (this.#running !== undefined) return;
    const bounds = await this.#options.log.bounds();
    this.#position = bounds.lastSeq;
    this.#tail = await this.#options.log.tail({ startSequence: bounds.lastSeq + 1 });
    this.#running = this.#follow();
    const sweepMs = Math.max(50, Math.min(1_000, this.#options.heartbeatMs / 2));
    this.#sweep = setInterval(() => this.#sweepAll(), sweepMs);
    this.#sweep.unref();
  }

  /** Ends every subscription and stops following the stream. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    for (const subscriber of [...this.#all]) subscriber.close('shutdown');
    await this.#tail?.close().catch(() => undefined);
    await this.#running;
  }

  /** A new subscriber for one connection; not yet attached. */
  subscriber(filter: StreamFilter, address: NoticeAddress, sink: SseSink): Subscriber {
    const subscriber = new Subscriber({
      id: this.#nextId++,
      filter,
      address,
      sink,
      maxBufferedBytes: this.#options.maxBufferedBytes,
      context: this.#context,
    });
    if (!subscriber.closed) this.#all.add(subscriber);
    return subscriber;
  }

  /** Routes live events to `subscriber` from now on; returns the position: every later event will be offered. */
  attach(subscriber: Subscriber): number {
    if (subscriber.closed) return this.#position;
    const key = subscriber.filter.key;
    if (key === undefined) {
      this.#fanIn.add(subscriber);
    } else {
      let group = this.#byKey.get(key);
      if (group === undefined) this.#byKey.set(key, (group = new Set()));
      group.add(subscriber);
    }
    return this.#position;
  }

  #detach(subscriber: Subscriber): void {
    const key = subscriber.filter.key;
    if (key === undefined) {
      this.#fanIn.delete(subscriber);
      return;
    }
    const group = this.#byKey.get(key);
    if (group === undefined) return;
    group.delete(subscriber);
    if (group.size === 0) this.#byKey.delete(key);
  }

  async #follow(): Promise<void> {
    while (!this.#stopped) {
      try {
        const tail = this.#tail ?? (await this.#options.log.tail({ startSequence: this.#position + 1 }));
        this.#tail = tail;
        for await (const record of tail) this.#dispatch(record);
        if (this.#stopped) return;
        this.#options.logger.warn({ position: this.#position }, 'event tail ended; reopening');
      } catch (error) {
        if (this.#stopped) return;
        this.#options.logger.error({ err: error, position: this.#position }, 'event tail failed; reopening');
      }
      await this.#tail?.close().catch(() => undefined);
      this.#tail = undefined;
      await sleep(TAIL_RETRY_MS);
    }
  }

  #dispatch(record: EventRecord): void {
    if (record.seq <= this.#position) return;
    const route = routeOf(record);
    const group = route === undefined ? undefined : this.#byKey.get(route.key);
    if (route !== undefined && (group !== undefined || this.#fanIn.size > 0)) {
      let text: string | undefined;
      const deliver = (subscriber: Subscriber): boolean => {
        if (!matches(subscriber.filter, route)) return true;
        text ??= recordText(record);
        if (text === undefined) return false;
        subscriber.offer(record.seq, text);
        return true;
      };
      let ok = true;
      if (group !== undefined) for (const subscriber of group) if (!(ok = deliver(subscriber))) break;
      if (ok) for (const subscriber of this.#fanIn) if (!(ok = deliver(subscriber))) break;
      if (!ok) this.#options.logger.warn({ sequence: record.seq }, 'undecodable event skipped');
    }
    this.#position = record.seq;
  }

  #scheduleFlush(subscriber: Subscriber): void {
    this.#dirty.add(subscriber);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const dirty = [...this.#dirty];
      this.#dirty.clear();
      for (const each of dirty) each.flush();
    });
  }

  #sweepAll(): void {
    const now = this.#now();
    const { heartbeatMs, idleCloseMs } = this.#options;
    for (const subscriber of this.#all) {
      if (idleCloseMs > 0 && subscriber.closeIfIdle(now, idleCloseMs, this.#position)) continue;
      subscriber.heartbeat(now, heartbeatMs);
    }
  }
}

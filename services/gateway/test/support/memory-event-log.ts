import { randomUUID } from 'node:crypto';
import { ServiceError } from '@ars/contracts';
import { EMPTY_TOKEN, encodeStoredEvent, encodeToken, eventSubject } from '@ars/bus';
import type { EventLog, EventLogBounds, EventLogRead, EventLogTail, EventRecord } from '../../src/ports.ts';

/** NATS subject matching: `*` one token, a final `>` one or more. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

/** One event to append, as a service would publish it. */
export interface AppendEvent {
  readonly type: string;
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run?: string;
  readonly payload?: Record<string, unknown>;
  /** @default now */
  readonly occurredAt?: Date;
  /** Stored time; @default occurredAt */
  readonly storedAt?: Date;
}

interface Stored {
  readonly seq: number;
  readonly subject: string;
  readonly runToken: string;
  readonly data: Uint8Array;
  readonly storedAtMs: number;
}

/**
 * The EVENTS stream in memory, with JetStream's read semantics: a read counts
 * the matching messages after each one it delivers (`pending`), the tail
 * follows every append. `expireBefore` drops the oldest messages.
 */
export class MemoryEventLog implements EventLog {
  #messages: Stored[] = [];
  #lastSeq = 0;
  #waiters = new Set<() => void>();
  /** Reads currently open (a subscriber's replay holds one). */
  openReads = 0;
  /** Reads ever opened. */
  readsOpened = 0;
  /**
   * When set, reads see the stream only up to this sequence, as a consumer on
   * a replica still catching up does; `nextStored` (the leader) sees it all.
   */
  replicaLastSeq: number | undefined;

  append(event: AppendEvent): number {
    const seq = ++this.#lastSeq;
    const occurredAt = event.occurredAt ?? new Date();
    const subject = eventSubject(event);
    const runToken = encodeToken(event.run ?? '');
    const data = encodeStoredEvent({
      id: randomUUID(),
      type: event.type,
      occurred_at: occurredAt.toISOString(),
      tenant: event.tenant,
      user: event.user,
      session: event.session,
      run: event.run ?? '',
      payload: event.payload ?? {},
    });
    this.#messages.push({ seq, subject, runToken, data, storedAtMs: (event.storedAt ?? occurredAt).getTime() });
    for (const wake of [...this.#waiters]) wake();
    return seq;
  }

  /** Appends a message whose body is not a stored event. */
  appendRaw(subject: string, body: string): number {
    const seq = ++this.#lastSeq;
    this.#messages.push({
      seq,
      subject,
      runToken: EMPTY_TOKEN,
      data: new TextEncoder().encode(body),
      storedAtMs: Date.now(),
    });
    for (const wake of [...this.#waiters]) wake();
    return seq;
  }

  /** Drops every message below `seq` (retention). */
  expireBefore(seq: number): void {
    this.#messages = this.#messages.filter((message) => message.seq >= seq);
  }

  async bounds(): Promise<EventLogBounds> {
    return { firstSeq: this.#messages[0]?.seq ?? this.#lastSeq + 1, lastSeq: this.#lastSeq };
  }

  /** What a read sees of the stream. */
  #visible(m: Stored): boolean {
    return this.replicaLastSeq === undefined || m.seq <= this.replicaLastSeq;
  }

  #pendingAfter(filter: string, seq: number): number {
    return this.#messages.filter((m) => m.seq > seq && this.#visible(m) && subjectMatches(filter, m.subject)).length;
  }

  #next(filter: string, after: number): Stored | undefined {
    return this.#messages.find((m) => m.seq > after && this.#visible(m) && subjectMatches(filter, m.subject));
  }

  async nextStored(options: { filterSubject: string; fromSequence: number }): Promise<number | undefined> {
    return this.#messages.find((m) => m.seq >= options.fromSequence && subjectMatches(options.filterSubject, m.subject))
      ?.seq;
  }

  #wait(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
    });
  }

  async read(options: { filterSubject: string; startSequence?: number; startTime?: Date }): Promise<EventLogRead> {
    const { filterSubject } = options;
    let after = 0;
    if (options.startSequence !== undefined) after = options.startSequence - 1;
    else if (options.startTime !== undefined) {
      const time = options.startTime.getTime();
      after = (this.#messages.find((m) => m.storedAtMs >= time)?.seq ?? this.#lastSeq + 1) - 1;
    }
    const pendingAtStart = this.#pendingAfter(filterSubject, after);
    let closed = false;
    this.openReads += 1;
    this.readsOpened += 1;
    const close = async () => {
      if (!closed) this.openReads -= 1;
      closed = true;
    };
    const iterate = async function* (this: MemoryEventLog): AsyncGenerator<EventRecord> {
      if (pendingAtStart === 0) return;
      let cursor = after;
      while (!closed) {
        const message = this.#next(filterSubject, cursor);
        if (message === undefined) return;
        cursor = message.seq;
        const pending = this.#pendingAfter(filterSubject, cursor);
        yield { ...message, pending };
        if (pending === 0) return;
      }
    }.bind(this);
    return { pendingAtStart, close, [Symbol.asyncIterator]: iterate };
  }

  async tail(options: { startSequence: number }): Promise<EventLogTail> {
    let closed = false;
    let wakeClosed: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => (wakeClosed = resolve));
    const iterate = async function* (this: MemoryEventLog): AsyncGenerator<EventRecord> {
      let cursor = options.startSequence - 1;
      while (!closed) {
        const message = this.#next('>', cursor);
        if (message === undefined) {
          await Promise.race([this.#wait(), stopped]);
          continue;
        }
        cursor = message.seq;
        yield { ...message, pending: 0 };
      }
    }.bind(this);
    return {
      async close() {
        closed = true;
        wakeClosed?.();
      },
      [Symbol.asyncIterator]: iterate,
    };
  }
}

/** `inner` with its records as `iterate` yields them (the same count at start, the same close). */
function rewrapRead(inner: EventLogRead, iterate: () => AsyncGenerator<EventRecord>): EventLogRead {
  return { pendingAtStart: inner.pendingAtStart, close: () => inner.close(), [Symbol.asyncIterator]: iterate };
}

/**
 * A log whose first read ends after `stopAfter` records as though nothing
 * more matched: what a JetStream read does when a delivered message's pending
 * count falls short while other messages are being stored.
 */
export class ShortReadLog extends MemoryEventLog {
  readonly stopAfter: number;
  #reads = 0;

  constructor(stopAfter: number) {
    super();
    this.stopAfter = stopAfter;
  }

  override async read(options: Parameters<MemoryEventLog['read']>[0]) {
    const inner = await super.read(options);
    if (++this.#reads > 1) return inner;
    const stopAfter = this.stopAfter;
    return rewrapRead(inner, async function* () {
      let yielded = 0;
      for await (const record of inner) {
        yield { ...record, pending: ++yielded === stopAfter ? 0 : record.pending };
        if (yielded === stopAfter) return;
      }
    });
  }
}

/**
 * A log whose first `failures` reads throw `unavailable` after yielding
 * `failAfter` records: what a JetStream read does when its consumer is gone
 * with a restarting nats-server (the read stalls, then gives up).
 */
export class FailingReadLog extends MemoryEventLog {
  readonly failAfter: number;
  failures: number;

  constructor(failAfter: number, failures: number) {
    super();
    this.failAfter = failAfter;
    this.failures = failures;
  }

  override async read(options: Parameters<MemoryEventLog['read']>[0]) {
    const inner = await super.read(options);
    if (this.failures <= 0) return inner;
    this.failures -= 1;
    const failAfter = this.failAfter;
    return rewrapRead(inner, async function* () {
      let yielded = 0;
      for await (const record of inner) {
        if (yielded++ === failAfter) break;
        yield record;
      }
      throw new ServiceError('unavailable', 'the event stream read got no message before its end');
    });
  }
}

import { HEARTBEAT, frameText, noticeFrame, replayCompleteText } from './sse-frames.ts';
import type { NoticeAddress } from './sse-frames.ts';
import type { StreamFilter } from './stream-filter.ts';

/** The HTTP response as a subscriber writes it (a `ServerResponse` fits). */
export interface SseSink {
  /** False when the socket is backed up: wait for `drain` before writing more. */
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  /** True once the connection is gone (it may go before the subscriber exists). */
  readonly destroyed?: boolean;
}

/** Why a subscription ended. */
export type CloseReason = 'client' | 'dropped' | 'idle' | 'shutdown' | 'failed' | 'unauthorized';

/** What a subscriber needs from the hub that feeds it. */
export interface SubscriberContext {
  /** Wall clock in epoch ms. */
  readonly now: () => number;
  /** Asks for a `flush()` soon (coalesced: one write per subscriber per turn of the event loop). */
  readonly scheduleFlush: (subscriber: Subscriber) => void;
  /** Stops routing live events to the subscriber (it keeps its connection). */
  readonly detach: (subscriber: Subscriber) => void;
  /** Forgets the subscriber entirely; `reason` is why it ended. */
  readonly closed: (subscriber: Subscriber, reason: CloseReason) => void;
}

/** Options of one subscriber. */
export interface SubscriberOptions {
  readonly id: number;
  readonly filter: StreamFilter;
  /** The verified triple: whom notices are addressed to. */
  readonly address: NoticeAddress;
  readonly sink: SseSink;
  /** Largest backlog held (while replaying, or while the socket is backed up), in bytes. */
  readonly maxBufferedBytes: number;
  readonly context: SubscriberContext;
}

/** Writes at least this much at once while replaying; smaller writes wait for the next flush. */
const WRITE_CHUNK_BYTES = 64 * 1024;
/** How long an ended response may take to flush before its socket is destroyed. */
const END_GRACE_MS = 5_000;

/**
 * One SSE connection. Replaying, it holds the live events the hub offers
 * (bounded) while the backlog is read from JetStream; live, it writes each
 * event whose sequence is above its cursor, so that replay and live never
 * duplicate. A backed-up socket (`write` returning false) makes frames wait
 * in a bounded queue; past the bound the subscriber gets `bus.dropped` for
 * the frames it did not receive and the connection is closed: the client
 * resumes after that range with `Last-Event-ID`.
 */
export class Subscriber {
  readonly id: number;
  readonly filter: StreamFilter;
  readonly address: NoticeAddress;
  /** The last sequence written (or queued) to this connection: its `Last-Event-ID`. */
  cursor = 0;
  #state: 'replay' | 'live' | 'closed' = 'replay';
  readonly #sink: SseSink;
  readonly #max: number;
  readonly #context: SubscriberContext;
  #heldSeqs: number[] = [];
  #heldTexts: string[] = [];
  #heldBytes = 0;
  #heldOverflowed = false;
  #out: string[] = [];
  #outBytes = 0;
  #outFirstSeq = -1;
  #outEvents = 0;
  #blocked = false;
  #drainWaiters: (() => void)[] = [];
  #lastWriteAt: number;
  #lastEventAt: number;
  #endTimer: NodeJS.Timeout | undefined;
  #reader: { close(): Promise<void> } | undefined;
  readonly #onDrain = (): void => {
    this.#blocked = false;
    this.flush();
    if (!this.#blocked) this.#release();
  };

  constructor(options: SubscriberOptions) {
    this.id = options.id;
    this.filter = options.filter;
    this.address = options.address;
    this.#sink = options.sink;
    this.#max = options.maxBufferedBytes;
    this.#context = options.context;
    this.#lastWriteAt = this.#lastEventAt = options.context.now();
    this.#sink.once('close', () => {
      if (this.#endTimer !== undefined) clearTimeout(this.#endTimer);
      this.close('client');
    });
    if (this.#sink.destroyed === true) this.close('client');
  }

  get closed(): boolean {
    return this.#state === 'closed';
  }

  get live(): boolean {
    return this.#state === 'live';
  }

  /** True once the replay buffer overflowed: live events since then must be read from JetStream. */
  get heldOverflowed(): boolean {
    return this.#heldOverflowed;
  }

  /** The read that feeds the replay, closed with the subscriber. */
  set reader(reader: { close(): Promise<void> } | undefined) {
    this.#reader = reader;
  }

  /** A live event from the hub, already filtered and rendered. */
  offer(seq: number, text: string): void {
    if (this.#state === 'live') {
      if (seq > this.cursor) this.#enqueue(seq, text);
      return;
    }
    if (this.#state !== 'replay' || this.#heldOverflowed) return;
    if (this.#heldBytes + text.length > this.#max) {
      this.#heldOverflowed = true;
      this.#heldSeqs = [];
      this.#heldTexts = [];
      this.#heldBytes = 0;
      this.#context.detach(this);
      return;
    }
    this.#heldSeqs.push(seq);
    this.#heldTexts.push(text);
    this.#heldBytes += text.length;
  }

  /** Starts holding live events again after an overflow (the hub attaches the subscriber anew). */
  resetHeld(): void {
    this.#heldOverflowed = false;
  }

  /** A replayed event. True when the caller should `await writable()` before the next one. */
  replayed(seq: number, text: string): boolean {
    if (this.#state === 'closed' || seq <= this.cursor) return false;
    this.#push(seq, text);
    return this.#blocked || this.#outBytes >= WRITE_CHUNK_BYTES;
  }

  /** Resolves once the queue has been handed to the socket and the socket accepts more. */
  writable(): Promise<void> {
    this.flush();
    if (!this.#blocked || this.#state === 'closed') return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** The cursor predates the stream: names the missing range and moves the cursor past it. */
  missed(fromSeq: number, toSeq: number): void {
    const text = this.#notice('bus.dropped', toSeq, {
      FromSeq: fromSeq,
      ToSeq: toSeq,
      DroppedCount: toSeq - fromSeq + 1,
      SubscriberID: this.id,
    });
    this.cursor = Math.max(this.cursor, toSeq);
    this.#out.push(text);
    this.#outBytes += text.length;
    this.#context.scheduleFlush(this);
  }

  /**
   * Ends the replay: delivers the held live events above the cursor, then
   * `replay.complete` with the sequence up to which everything was delivered.
   */
  goLive(covered: number): void {
    if (this.#state !== 'replay') return;
    this.#state = 'live';
    for (let i = 0; i < this.#heldSeqs.length; i++) {
      const seq = this.#heldSeqs[i]!;
      if (seq > this.cursor) this.#push(seq, this.#heldTexts[i]!);
    }
    this.#heldSeqs = [];
    this.#heldTexts = [];
    this.#heldBytes = 0;
    const text = replayCompleteText(Math.max(covered, this.cursor));
    this.#out.push(text);
    this.#outBytes += text.length;
    this.#context.scheduleFlush(this);
  }

  /** Hands the queue to the socket unless it is backed up. */
  flush(): void {
    if (this.#blocked || this.#state === 'closed' || this.#out.length === 0) return;
    const chunk = this.#out.length === 1 ? this.#out[0]! : this.#out.join('');
    this.#out = [];
    this.#outBytes = 0;
    this.#outFirstSeq = -1;
    this.#outEvents = 0;
    this.#lastWriteAt = this.#context.now();
    if (!this.#sink.write(chunk)) {
      this.#blocked = true;
      this.#sink.once('drain', this.#onDrain);
    }
  }

  /** Writes a heartbeat comment when nothing was written for `intervalMs`. */
  heartbeat(now: number, intervalMs: number): void {
    if (this.#state === 'closed' || this.#blocked || now - this.#lastWriteAt < intervalMs) return;
    this.#out.push(HEARTBEAT);
    this.#outBytes += HEARTBEAT.length;
    this.flush();
  }

  /**
   * Closes a live subscription that delivered no event for `idleMs` with
   * `bus.subscription_idle_closed`. `position` is the hub's last dispatched
   * sequence: every event up to it was offered, so it is a lossless cursor.
   */
  closeIfIdle(now: number, idleMs: number, position: number): boolean {
    if (this.#state !== 'live' || this.#blocked || this.#out.length > 0) return false;
    const idle = now - this.#lastEventAt;
    if (idle < idleMs) return false;
    const sequence = Math.max(position, this.cursor);
    const text = this.#notice(
      'bus.subscription_idle_closed',
      sequence,
      { SubscriberID: this.id, IdleSeconds: idle / 1000 },
      sequence > this.cursor,
    );
    this.close('idle', text);
    return true;
  }

  /**
   * Ends the subscription with a last notice frame of `type`: every frame
   * already queued is handed to the socket first (nothing the cursor covers is
   * lost), then the notice, whose `sequence` is the cursor and which carries
   * no `id:` line, so the client's `Last-Event-ID` stays that of the last
   * event it got. Used when the stream's token stops being accepted.
   */
  closeWithNotice(type: string, payload: Record<string, unknown>, reason: CloseReason): void {
    if (this.#state === 'closed') return;
    const pending = this.#out.join('');
    this.#out = [];
    this.#outBytes = 0;
    const text = pending + this.#notice(type, this.cursor, payload, false);
    this.close(reason, text);
  }

  /**
   * Ends the subscription once: detaches it, stops its replay, and unless the
   * client left, writes `finalText` and ends the response (destroying the
   * socket if it cannot flush within a grace period).
   */
  close(reason: CloseReason, finalText?: string): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#context.closed(this, reason);
    this.#heldSeqs = [];
    this.#heldTexts = [];
    this.#out = [];
    void this.#reader?.close().catch(() => undefined);
    this.#reader = undefined;
    this.#release();
    if (reason === 'client') return;
    if (finalText !== undefined) this.#sink.write(finalText);
    this.#sink.end();
    this.#endTimer = setTimeout(() => this.#sink.destroy(), END_GRACE_MS);
    this.#endTimer.unref();
  }

  #push(seq: number, text: string): void {
    this.#out.push(text);
    this.#outBytes += text.length;
    this.#outEvents += 1;
    if (this.#outFirstSeq < 0) this.#outFirstSeq = seq;
    this.cursor = seq;
    this.#lastEventAt = this.#context.now();
    this.#context.scheduleFlush(this);
  }

  #enqueue(seq: number, text: string): void {
    const bound = this.#outBytes + text.length;
    if (!this.#blocked && bound > Math.min(WRITE_CHUNK_BYTES, this.#max)) this.flush();
    if (this.#blocked && this.#outBytes + text.length > this.#max) {
      this.#drop(seq);
      return;
    }
    this.#push(seq, text);
  }

  /** The slow-consumer policy: name every undelivered event, close, let the client resume after them. */
  #drop(seq: number): void {
    const fromSeq = this.#outFirstSeq >= 0 ? this.#outFirstSeq : seq;
    const count = this.#outEvents + 1;
    const text = this.#notice('bus.dropped', seq, {
      FromSeq: fromSeq,
      ToSeq: seq,
      DroppedCount: count,
      SubscriberID: this.id,
    });
    this.cursor = seq;
    this.close('dropped', text);
  }

  #notice(type: string, sequence: number, payload: Record<string, unknown>, withId = true): string {
    const frame = noticeFrame(type, sequence, this.address, payload, new Date(this.#context.now()));
    return frameText(frame, withId);
  }

  #release(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

import { describe, expect, it, vi } from 'vitest';
import { watchAuthority } from '../src/events/stream-authority.ts';
import { streamFilter } from '../src/events/stream-filter.ts';
import { Subscriber } from '../src/events/subscriber.ts';
import type { SseSink, SubscriberContext } from '../src/events/subscriber.ts';

/** A socket stand-in: `accept` decides what `write` answers; `drain()` plays the socket catching up. */
class FakeSink implements SseSink {
  readonly chunks: string[] = [];
  accept = true;
  ended = false;
  destroyed = false;
  readonly #listeners = new Map<string, (() => void)[]>();

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return this.accept;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  once(event: 'drain' | 'close', listener: () => void): unknown {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), listener]);
    return this;
  }
  emit(event: 'drain' | 'close'): void {
    const listeners = this.#listeners.get(event) ?? [];
    this.#listeners.set(event, []);
    for (const listener of listeners) listener();
  }
  get text(): string {
    return this.chunks.join('');
  }
  /** The `id:` lines written, as numbers. */
  get ids(): number[] {
    return [...this.text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
  }
}

function setup(maxBufferedBytes = 1_000_000) {
  const sink = new FakeSink();
  const events = { detached: 0, closed: 0 };
  const context: SubscriberContext = {
    now: () => 1_000_000,
    scheduleFlush: () => undefined,
    detach: () => void (events.detached += 1),
    closed: () => void (events.closed += 1),
  };
  const subscriber = new Subscriber({
    id: 7,
    filter: streamFilter({ triple: { tenant: 't', user: 'u', session: 's' } }),
    address: { tenant: 't', user: 'u', session: 's' },
    sink,
    maxBufferedBytes,
    context,
  });
  return { sink, subscriber, events };
}

const frame = (seq: number, size = 10) => `id: ${seq}\ndata: ${'x'.repeat(size)}\n\n`;

describe('Subscriber: replay to live hand-over', () => {
  it('delivers the held live events above the cursor once, then replay.complete', () => {
    const { sink, subscriber } = setup();
    subscriber.cursor = 3;
    subscriber.offer(5, frame(5));
    subscriber.offer(6, frame(6));
    subscriber.replayed(4, frame(4));
    subscriber.replayed(5, frame(5));
    subscriber.goLive(5);
    subscriber.offer(6, frame(6));
    subscriber.offer(7, frame(7));
    subscriber.flush();
    expect(sink.ids).toEqual([4, 5, 6, 7]);
    expect(sink.text).toContain('event: replay.complete\ndata: {"sequence":6}\n\n');
    expect(sink.text.indexOf('replay.complete')).toBeLessThan(sink.text.indexOf('id: 7'));
  });

  it('ignores live events at or below its cursor', () => {
    const { sink, subscriber } = setup();
    subscriber.cursor = 10;
    subscriber.goLive(10);
    subscriber.offer(9, frame(9));
    subscriber.offer(10, frame(10));
    subscriber.offer(11, frame(11));
    subscriber.flush();
    expect(sink.ids).toEqual([11]);
  });

  it('detaches and flags an overflow when the held live events outgrow the buffer', () => {
    const { subscriber, events } = setup(100);
    for (let seq = 1; seq <= 5; seq++) subscriber.offer(seq, frame(seq, 20));
    expect(subscriber.heldOverflowed).toBe(true);
    expect(events.detached).toBe(1);
    subscriber.resetHeld();
    expect(subscriber.heldOverflowed).toBe(false);
  });

  it('names a cursor older than the stream with bus.dropped and moves past it', () => {
    const { sink, subscriber } = setup();
    subscriber.cursor = 2;
    subscriber.missed(3, 9);
    subscriber.replayed(9, frame(9));
    subscriber.replayed(10, frame(10));
    subscriber.flush();
    expect(sink.ids).toEqual([9, 10]);
    expect(sink.text).toContain('"type":"bus.dropped"');
    expect(sink.text).toContain('"payload":{"FromSeq":3,"ToSeq":9,"DroppedCount":7,"SubscriberID":7}');
  });
});

describe('Subscriber: backpressure', () => {
  it('waits for drain before writing again', () => {
    const { sink, subscriber } = setup();
    subscriber.goLive(0);
    sink.accept = false;
    subscriber.offer(1, frame(1));
    subscriber.flush();
    subscriber.offer(2, frame(2));
    subscriber.flush();
    expect(sink.ids).toEqual([1]);
    sink.accept = true;
    sink.emit('drain');
    expect(sink.ids).toEqual([1, 2]);
  });

  it('drops and closes a subscriber whose queue outgrows the bound while the socket is backed up', () => {
    const { sink, subscriber, events } = setup(200);
    subscriber.goLive(0);
    sink.accept = false;
    subscriber.offer(1, frame(1));
    subscriber.flush();
    for (let seq = 2; seq <= 20; seq++) subscriber.offer(seq, frame(seq, 30));
    expect(subscriber.closed).toBe(true);
    expect(events.closed).toBe(1);
    expect(sink.ended).toBe(true);
    const notice = sink.chunks.at(-1)!;
    const payload = JSON.parse(notice.split('\n')[1]!.slice('data: '.length)).payload;
    expect(payload.FromSeq).toBe(2);
    expect(payload.DroppedCount).toBe(payload.ToSeq - 1);
    expect(notice.startsWith(`id: ${payload.ToSeq}\n`)).toBe(true);
  });

  it('releases a replay waiting for drain when the client leaves', async () => {
    const { sink, subscriber } = setup();
    sink.accept = false;
    subscriber.replayed(1, frame(1, 70_000));
    const waiting = subscriber.writable();
    sink.emit('close');
    await expect(waiting).resolves.toBeUndefined();
    expect(subscriber.closed).toBe(true);
    expect(sink.ended).toBe(false);
  });
});

describe('Subscriber: idle', () => {
  it('stays open while it keeps receiving events', () => {
    const { subscriber } = setup();
    subscriber.goLive(0);
    subscriber.flush();
    expect(subscriber.closeIfIdle(1_000_000 + 500, 1_000, 0)).toBe(false);
  });

  it('closes after the idle limit with a lossless cursor', () => {
    const { sink, subscriber } = setup();
    subscriber.goLive(0);
    subscriber.flush();
    expect(subscriber.closeIfIdle(1_000_000 + 2_000, 1_000, 42)).toBe(true);
    expect(sink.ids).toEqual([42]);
    expect(sink.text).toContain('"payload":{"SubscriberID":7,"IdleSeconds":2}');
    expect(sink.ended).toBe(true);
  });
});

describe('Subscriber: closing when its token stops being accepted', () => {
  const token = { kid: 'k1', issuer: 'https://idp.test', subject: 'sub-1' };
  const never = () => () => undefined;

  it('hands a backed-up queue to the socket before the last auth.rejected frame, which carries no id', () => {
    const { sink, subscriber } = setup();
    subscriber.goLive(0);
    sink.accept = false;
    subscriber.offer(1, frame(1));
    subscriber.flush();
    subscriber.offer(2, frame(2));
    watchAuthority(subscriber, { refusedFromMs: 0, onRevoked: never, token }, () => 1);
    expect(sink.ids).toEqual([1, 2]);
    const last = sink.text.trimEnd().split('\n\n').at(-1)!;
    expect(last.startsWith('data: ')).toBe(true);
    expect(JSON.parse(last.slice('data: '.length))).toMatchObject({
      type: 'auth.rejected',
      sequence: 2,
      payload: { Reason: 'expired', KID: 'k1', Issuer: 'https://idp.test', Subject: 'sub-1' },
    });
    expect([subscriber.closed, sink.ended]).toEqual([true, true]);
  });

  it('arms a token expiring beyond the longest timer delay in steps instead of closing at once', () => {
    vi.useFakeTimers();
    try {
      const { subscriber } = setup();
      subscriber.goLive(0);
      const far = 30 * 86_400_000;
      watchAuthority(subscriber, { refusedFromMs: Date.now() + far, onRevoked: never, token }, () => Date.now());
      vi.advanceTimersByTime(1_000);
      expect(subscriber.closed).toBe(false);
      vi.advanceTimersByTime(far);
      expect(subscriber.closed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('closes with Reason revoked when the token is revoked, and stops watching once cleaned up', () => {
    const { subscriber } = setup();
    let revoke: (() => void) | undefined;
    let unsubscribed = false;
    const onRevoked = (listener: () => void) => {
      revoke = listener;
      return () => void (unsubscribed = true);
    };
    const stop = watchAuthority(subscriber, { onRevoked, token }, () => 1);
    revoke?.();
    expect(subscriber.closed).toBe(true);
    expect(unsubscribed).toBe(true);
    stop();
  });
});

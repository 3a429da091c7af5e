import type { RevocationKv, RevocationKvEntry, RevocationKvWatchEntry } from '../../src/auth/revocation-list.ts';

/** An async iterable fed by hand; `stop()` (or `fail()`) ends it. */
class Channel<T> implements AsyncIterable<T> {
  readonly #queue: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | undefined;
  #rejecting: ((error: Error) => void) | undefined;
  #ended = false;
  #error: Error | undefined;

  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiting !== undefined) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: item, done: false });
    } else this.#queue.push(item);
  }

  stop(): void {
    this.#ended = true;
    this.#waiting?.({ value: undefined, done: true });
    this.#waiting = undefined;
  }

  fail(error: Error): void {
    this.#error = error;
    this.#ended = true;
    this.#rejecting?.(error);
    this.#waiting = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.#queue.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.#error !== undefined) return Promise.reject(this.#error);
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.#waiting = resolve;
          this.#rejecting = reject;
        });
      },
    };
  }
}

function entry(key: string, operation: 'PUT' | 'DEL', value: string, isUpdate: boolean): RevocationKvWatchEntry {
  return { key, operation, isUpdate, string: () => value };
}

/**
 * The `ars_revocations` bucket in memory, watched like JetStream KV: a watch
 * replays the last value of every key (`isUpdate` false but for the last),
 * then delivers every change (`isUpdate` true). `hold` delays the replay.
 */
export class FakeRevocationKv implements RevocationKv {
  readonly values = new Map<string, string>();
  readonly watches: Channel<RevocationKvWatchEntry>[] = [];
  gets = 0;
  failGets = false;
  /** While true, a new watch delivers nothing until `release()`. */
  hold = false;
  #held: (() => void)[] = [];

  async get(key: string): Promise<RevocationKvEntry | null> {
    this.gets += 1;
    if (this.failGets) throw new Error('NATS is down');
    const value = this.values.get(key);
    return value === undefined ? null : entry(key, 'PUT', value, false);
  }

  async status(): Promise<{ values: number }> {
    return { values: this.values.size };
  }

  async watch(): Promise<AsyncIterable<RevocationKvWatchEntry> & { stop(): void }> {
    const channel = new Channel<RevocationKvWatchEntry>();
    const replay = [...this.values];
    const deliver = () =>
      replay.forEach(([key, value], index) => channel.push(entry(key, 'PUT', value, index === replay.length - 1)));
    if (this.hold) this.#held.push(deliver);
    else deliver();
    this.watches.push(channel);
    return channel;
  }

  /** Delivers the replays held back by `hold`. */
  release(): void {
    this.hold = false;
    for (const deliver of this.#held.splice(0)) deliver();
  }

  put(key: string, value: string): void {
    this.values.set(key, value);
    for (const watch of this.watches) watch.push(entry(key, 'PUT', value, true));
  }

  delete(key: string): void {
    this.values.delete(key);
    for (const watch of this.watches) watch.push(entry(key, 'DEL', '', true));
  }

  /** Ends every open watch with an error (a lost consumer). */
  breakWatches(): void {
    for (const watch of this.watches.splice(0)) watch.fail(new Error('consumer lost'));
  }
}

import type { ArsClient, SubscribeOptions } from '@ars/client';
import type { EventFrame } from '@ars/contracts';

/** The three terminal events of a run. */
export const TERMINAL_TYPES: readonly string[] = ['task.completed', 'task.failed', 'task.cancelled'];

/** True for a run's terminal event. */
export function isTerminal(frame: EventFrame): boolean {
  return TERMINAL_TYPES.includes(frame.type);
}

/** Options of {@link EventLog.until}. */
export interface UntilOptions {
  /** @default 15000 */
  readonly timeoutMs?: number;
  /** Says what was awaited, for the timeout message. */
  readonly message?: string;
}

interface Waiter {
  readonly predicate: (frame: EventFrame, all: readonly EventFrame[]) => boolean;
  readonly resolve: (frame: EventFrame) => void;
  readonly reject: (error: Error) => void;
}

/**
 * One SSE subscription read in the background: every frame is kept in
 * `frames`, and `until` resolves with the first frame (already received or
 * still to come) that matches. Lets a test wait for several events of one
 * stream in turn without re-subscribing. Close it when done.
 */
export class EventLog {
  readonly frames: EventFrame[] = [];
  readonly #controller = new AbortController();
  readonly #waiters = new Set<Waiter>();
  #ended: Error | undefined;
  readonly done: Promise<void>;

  constructor(client: ArsClient, options: SubscribeOptions = {}) {
    const iterable = client.subscribe({ reconnect: false, ...options, signal: this.#controller.signal });
    this.done = this.#read(iterable);
  }

  async #read(iterable: AsyncIterable<EventFrame>): Promise<void> {
    try {
      for await (const frame of iterable) {
        this.frames.push(frame);
        for (const waiter of [...this.#waiters]) {
          if (waiter.predicate(frame, this.frames)) {
            this.#waiters.delete(waiter);
            waiter.resolve(frame);
          }
        }
      }
      this.#end(new Error('the event stream ended'));
    } catch (error) {
      this.#end(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #end(error: Error): void {
    this.#ended = error;
    for (const waiter of this.#waiters) waiter.reject(new Error(`${error.message}; received ${this.describe()}`));
    this.#waiters.clear();
  }

  /** The first frame matching `predicate`, from those received or the next ones. */
  until(
    predicate: (frame: EventFrame, all: readonly EventFrame[]) => boolean,
    options: UntilOptions = {},
  ): Promise<EventFrame> {
    for (let i = 0; i < this.frames.length; i++) {
      const frame = this.frames[i] as EventFrame;
      if (predicate(frame, this.frames.slice(0, i + 1))) return Promise.resolve(frame);
    }
    if (this.#ended !== undefined) {
      return Promise.reject(new Error(`${this.#ended.message}; received ${this.describe()}`));
    }
    const timeoutMs = options.timeoutMs ?? 15_000;
    return new Promise<EventFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        const what = options.message ?? 'a matching event';
        reject(new Error(`EventLog: ${what} did not arrive within ${timeoutMs} ms; received ${this.describe()}`));
      }, timeoutMs);
      const waiter: Waiter = {
        predicate,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /** The first frame of this type (optionally also matching `where`). */
  next(type: string, where: (frame: EventFrame) => boolean = () => true, options: UntilOptions = {}) {
    return this.until((frame) => frame.type === type && where(frame), { message: type, ...options });
  }

  /** The run's terminal event. */
  terminal(options: UntilOptions = {}): Promise<EventFrame> {
    return this.until(isTerminal, { message: 'a terminal event', ...options });
  }

  /** Why the subscription ended (its error's message), or undefined while it reads. */
  get endedWith(): string | undefined {
    return this.#ended?.message;
  }

  /** The types received so far, in order. */
  types(): string[] {
    return this.frames.map((frame) => frame.type);
  }

  /** Closes the subscription. */
  async close(): Promise<void> {
    this.#controller.abort();
    await this.done;
  }

  describe(): string {
    const types = this.types();
    return types.length === 0 ? 'nothing' : `${types.length}: ${types.slice(-25).join(', ')}`;
  }
}

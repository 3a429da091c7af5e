/**
 * Waiting for a run's events the way a client does: one SSE subscription
 * (`GET /v1/events`, filtered by type) per client, opened once and kept; a
 * waiter asks for the next frame of a run and type. Frames that arrive before
 * anyone asks (the run id is known only once `start` answers) are held per
 * run until taken, and a run's held frames are dropped once its last wait
 * ends (see {@link RunWatch.forget}).
 */
import { isControlEvent } from '@ars/client';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';

/** A frame and when it arrived (`performance.now()`). */
export interface Arrival {
  readonly frame: EventFrame;
  readonly at: number;
}

interface Waiter {
  readonly types: ReadonlySet<string>;
  readonly resolve: (arrival: Arrival) => void;
}

/** One client's subscription. */
export interface RunWatch {
  /** The next frame of `run` whose type is one of `types` (held or future). */
  next(run: string, types: readonly string[], timeoutMs?: number): Promise<Arrival>;
  /** Drops whatever is held for `run` (call once its last awaited frame arrived). */
  forget(run: string): void;
  close(): void;
}

/**
 * Opens a subscription for `types` in `session` and resolves once it is live
 * (`replay.complete` received). Rejects when the route refuses (for example
 * while `GET /v1/events` is not served yet).
 */
export async function openRunWatch(
  client: ArsClient,
  options: { readonly session: string; readonly types: readonly string[] },
): Promise<RunWatch> {
  const controller = new AbortController();
  const held = new Map<string, Arrival[]>();
  const waiters = new Map<string, Waiter[]>();
  const iterator = client
    .subscribe({
      session: options.session,
      types: options.types,
      includeControlEvents: true,
      reconnect: false,
      signal: controller.signal,
    })
    [Symbol.asyncIterator]();

  for (;;) {
    const first = await iterator.next();
    if (first.done) throw new Error('the event stream ended before replay.complete');
    if (isControlEvent(first.value) && first.value.control === 'replay.complete') break;
  }

  const deliver = (frame: EventFrame): void => {
    const arrival = { frame, at: performance.now() };
    const list = waiters.get(frame.run);
    const index = list?.findIndex((w) => w.types.has(frame.type)) ?? -1;
    if (list !== undefined && index >= 0) {
      const [waiter] = list.splice(index, 1);
      if (list.length === 0) waiters.delete(frame.run);
      waiter?.resolve(arrival);
      return;
    }
    const queue = held.get(frame.run);
    if (queue === undefined) held.set(frame.run, [arrival]);
    else queue.push(arrival);
  };

  void (async () => {
    for (;;) {
      const item = await iterator.next().catch(() => ({ done: true as const, value: undefined }));
      if (item.done) return;
      if (!isControlEvent(item.value)) deliver(item.value);
    }
  })();

  return {
    next(run, types, timeoutMs = 30_000) {
      const queue = held.get(run);
      const index = queue?.findIndex((a) => types.includes(a.frame.type)) ?? -1;
      if (queue !== undefined && index >= 0) {
        const [arrival] = queue.splice(index, 1);
        return Promise.resolve(arrival as Arrival);
      }
      return new Promise<Arrival>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${types.join('|')} for run ${run} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        const waiter: Waiter = {
          types: new Set(types),
          resolve: (arrival) => {
            clearTimeout(timer);
            resolve(arrival);
          },
        };
        const list = waiters.get(run);
        if (list === undefined) waiters.set(run, [waiter]);
        else list.push(waiter);
      });
    },
    forget(run) {
      held.delete(run);
    },
    close() {
      controller.abort();
      void iterator.return?.();
    },
  };
}

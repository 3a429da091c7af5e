import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** @default 10000 */
  readonly timeoutMs?: number;
  /** Pause between checks, in ms. @default 50 */
  readonly intervalMs?: number;
  /** Says what was awaited, for the timeout message. */
  readonly message?: string;
}

/**
 * Polls `predicate` until it returns a truthy value (a throw counts as not
 * yet) and resolves with that value; rejects at the timeout with the last error.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const what = options.message ?? 'the condition';
      const detail = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`waitFor: ${what} did not hold within ${timeoutMs} ms${detail}`, { cause: lastError });
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/** Options of {@link collectEvents}. */
export interface CollectOptions {
  /** @default 10000 */
  readonly timeoutMs?: number;
}

/**
 * Reads `iterable` until `until(item, collected)` is true and resolves with
 * every item read, that one included; then closes the iterator. Rejects when
 * the stream ends first or at the timeout, listing what arrived.
 */
export async function collectEvents<T>(
  iterable: AsyncIterable<T>,
  until: (item: T, collected: readonly T[]) => boolean,
  options: CollectOptions = {},
): Promise<T[]> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const iterator = iterable[Symbol.asyncIterator]();
  const collected: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`collectEvents: no matching event within ${timeoutMs} ms; received ${describe(collected)}`)),
      timeoutMs,
    );
  });
  try {
    for (;;) {
      const result = await Promise.race([iterator.next(), timedOut]);
      if (result.done)
        throw new Error(`collectEvents: the stream ended before a matching event; received ${describe(collected)}`);
      collected.push(result.value);
      if (until(result.value, collected)) return collected;
    }
  } finally {
    clearTimeout(timer);
    // A pending read must not keep the connection open; never wait long for a foreign iterator.
    const bounded = new AbortController();
    await Promise.race([
      Promise.resolve(iterator.return?.()).catch(() => undefined),
      sleep(1_000, undefined, { signal: bounded.signal }).catch(() => undefined),
    ]);
    bounded.abort();
  }
}

function describe(items: readonly unknown[]): string {
  if (items.length === 0) return 'nothing';
  const types = items.map((item) =>
    typeof item === 'object' && item !== null && 'type' in item
      ? String((item as { type: unknown }).type)
      : JSON.stringify(item),
  );
  return `${items.length}: ${types.slice(-20).join(', ')}`;
}

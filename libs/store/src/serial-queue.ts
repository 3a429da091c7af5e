/**
 * Runs async tasks one at a time, in submission order. The embedded adapter
 * keeps one per collection and sends every write through it, so a
 * read-then-write (find-and-modify, upsert, modified-count) cannot interleave
 * with another write: nedb serialises its own operations, not sequences of
 * them. Internal to this package.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task submitted before it has settled. */
  run<R>(task: () => Promise<R>): Promise<R> {
    const result = this.#tail.then(task);
    // The tail only orders the tasks: the caller gets a task's failure through `result`.
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task submitted so far has settled. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}

/**
 * The queries of turns just admitted, kept until their `task.spawned` is
 * recorded. `_session.admit` carries the query of the start it admits, so
 * recording the turn needs no `tasks.get` read-back from the run-executor
 * (an RPC, a task read and a stream-info request per run). Only a hint: a
 * query missing here (this replica did not admit it, a restart, an entry
 * aged out) is still read back, so entries are bounded in number, total
 * size and age.
 */
export interface TurnQueries {
  remember(taskId: string, query: string): void;
  /** The query admitted for `taskId`, once: it is forgotten when taken. */
  take(taskId: string): string | undefined;
  readonly size: number;
}

export interface TurnQueriesOptions {
  /** At most this many entries; the oldest go first. @default 10000 */
  readonly capacity?: number;
  /** At most this many query characters in all; the oldest go first. @default 8_000_000 */
  readonly maxChars?: number;
  /** Entries older than this are dropped, in ms. @default 60000 */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

export function createTurnQueries(options: TurnQueriesOptions = {}): TurnQueries {
  const capacity = options.capacity ?? 10_000;
  const maxChars = options.maxChars ?? 8_000_000;
  let chars = 0;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const now = options.now ?? Date.now;
  // Insertion order is age order: the first entries are the oldest.
  const entries = new Map<string, { readonly query: string; readonly at: number }>();

  const forget = (taskId: string): { readonly query: string; readonly at: number } | undefined => {
    const entry = entries.get(taskId);
    if (entry === undefined) return undefined;
    entries.delete(taskId);
    chars -= entry.query.length;
    return entry;
  };

  const dropAged = (): void => {
    const oldest = now() - maxAgeMs;
    for (const [taskId, entry] of entries) {
      if (entry.at > oldest && entries.size <= capacity && chars <= maxChars) return;
      forget(taskId);
    }
  };

  return {
    remember(taskId, query) {
      forget(taskId);
      if (query.length > maxChars) return; // read back instead
      entries.set(taskId, { query, at: now() });
      chars += query.length;
      dropAged();
    },
    take(taskId) {
      const entry = forget(taskId);
      if (entry === undefined) return undefined;
      return entry.at > now() - maxAgeMs ? entry.query : undefined;
    },
    get size() {
      return entries.size;
    },
  };
}

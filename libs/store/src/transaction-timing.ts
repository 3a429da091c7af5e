/**
 * The one timing hook of the store: the embedded SQLite engine reports each
 * transaction it ends (a read on its own, or the write transaction that one
 * turn of the event loop's writes share) with its duration, never a single
 * SQL statement. Without an observer nothing is measured.
 */

/** Told of each ended transaction: `seconds` from BEGIN to COMMIT (or rollback), `ok` false when it failed. */
export type TransactionObserver = (kind: 'read' | 'write', seconds: number, ok: boolean) => void;

let observer: TransactionObserver | undefined;

/** Sets (or, with `undefined`, removes) the process's transaction observer. */
export function observeTransactions(next: TransactionObserver | undefined): void {
  observer = next;
}

/** A transaction's start for {@link transactionEnded}: 0 while nobody observes. Internal. */
export function transactionStarted(): number {
  return observer === undefined ? 0 : performance.now();
}

/** Reports a transaction begun at `started` (from {@link transactionStarted}). Internal. */
export function transactionEnded(kind: 'read' | 'write', started: number, ok: boolean): void {
  if (observer !== undefined && started !== 0) observer(kind, (performance.now() - started) / 1000, ok);
}

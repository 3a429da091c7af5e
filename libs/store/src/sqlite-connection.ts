import { DatabaseSync } from 'node:sqlite';
import type { SQLInputValue, StatementResultingChanges, StatementSync } from 'node:sqlite';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { transactionEnded, transactionStarted } from './transaction-timing.ts';
import { WalSync } from './wal-sync.ts';
import type { WalSyncOptions } from './wal-sync.ts';

/**
 * One store's SQLite connection: its settings, its prepared statements, its
 * transactions, and how it notices what other connections (processes)
 * committed. Internal to this package.
 */

/** How long a transaction waits for another connection's write to finish before failing (retryable), in ms. */
export const BUSY_TIMEOUT_MS = 5_000;

/** SQLite's primary result code for a lock another connection holds. */
const SQLITE_BUSY = 5;

/** True for SQLite's "database is locked" (any extended code of SQLITE_BUSY). */
export function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === SQLITE_BUSY;
}

/**
 * The wait before retry `attempt` of a busy transaction: the next turns of
 * the event loop first (another process's writes last microseconds), then
 * 1 ms timers. A process writing in a loop holds the lock most of the time
 * and frees it only between its transactions, so the waiter's chance is its
 * number of attempts: with waits growing to 10 ms, a process claiming jobs
 * against another's claim loop got none of 1,000 in a quarter of the runs
 * (and 1–3 in more); with 1 ms it got 27–898 of 1,000 in 20 runs. An attempt
 * is one failed lock call.
 */
function backoff(attempt: number): Promise<unknown> {
  return attempt < 8 ? nextTurn() : sleep(1);
}

/**
 * The page cache of a connection, in KiB: the bound on what the engine
 * keeps in memory, whatever the size of the data.
 */
export const CACHE_SIZE_KIB = 8_192;

/**
 * Pages the write-ahead log takes before a commit checkpoints it into the
 * database (SQLite's default is 1,000). A checkpoint copies every page the
 * log holds and syncs twice; the pages a service rewrites all the time (the
 * tail of a table, of an index) are copied once per checkpoint however often
 * they changed, so fewer, larger checkpoints cost less per write: measured
 * under the runs benchmark, 143–150 → 187–202 runs/s. The log then holds up
 * to about 40 MiB on disk (not in memory), cut back to
 * {@link JOURNAL_SIZE_LIMIT_BYTES} after a checkpoint. The log's own sync,
 * most of a checkpoint's wait, is done beforehand in the background
 * (`wal-sync.ts`).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** The size the write-ahead log is truncated to once checkpointed. */
export const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** The tables of the store itself; collection tables are prefixed `c:`/`e:`, so none can clash. */
const METADATA = `
  CREATE TABLE IF NOT EXISTS "store:indexes" (
    ix INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    fields TEXT NOT NULL,
    "unique" INTEGER NOT NULL,
    sparse INTEGER NOT NULL,
    unordered INTEGER NOT NULL,
    UNIQUE (collection, name)
  );
  CREATE TABLE IF NOT EXISTS "store:migrations" (
    collection TEXT PRIMARY KEY,
    file TEXT NOT NULL,
    documents INTEGER NOT NULL,
    at TEXT NOT NULL
  );
`;

/** A read sees one snapshot; a write holds the database's write lock from its start. */
/**
 * The most operations (reads and writes) a turn's batch may hold for
 * `commitSoon` to commit it before the end of the turn. An early commit
 * splits the batch: the turn's later writes pay a commit of their own. A
 * batch this small is a turn with few runs to serve: at a start it held 1-5
 * in the start benchmark's phase (sequential starts, a few runs in flight),
 * and 1-25 at sixteen clients. Committing every start's batch early took the
 * start's p50 down 22% but cost sixteen clients 7-10% of their runs/s; at
 * this bound the p50 fell 12% and runs/s stayed within the drift
 * (bench/HISTORY.md, issue 29).
 */
export const COMMIT_SOON_MAX_OPERATIONS = 3;

export type TransactionMode = 'read' | 'write';

/**
 * The transactions of one event-loop turn that share a write transaction:
 * each settles when that transaction commits, with its own result or
 * failure, or they all fail with the commit.
 */
interface Batch {
  readonly members: Array<{ settle: () => void; fail: (error: unknown) => void }>;
  /** Settles once the batch committed or failed. */
  readonly done: Promise<void>;
  /** `transactionStarted()` at BEGIN. */
  readonly started: number;
  /** Commits it and settles its members (nothing once it committed or was abandoned). */
  readonly commit: () => void;
}

/** A write of the batch while its work runs: how what it changed can be undone when it fails. */
interface Member {
  /** The batch's first write: its failure rolls the whole transaction back, it needs no savepoint. */
  readonly first: boolean;
  /** Its savepoint is taken. */
  savepoint: boolean;
  /** It changed rows without a savepoint (its last change): only the whole transaction can undo them. */
  bare: boolean;
}

/** Options of a {@link Connection}. */
export interface ConnectionOptions {
  /**
   * Runs after each batch's commit, in the same turn, once the operations
   * that awaited the commit went on to their next await: for what they
   * started that is itself held to the end of a turn (the bus's coalesced
   * socket writes), which would otherwise wait a whole turn more.
   */
  readonly afterCommit?: (() => void) | undefined;
  /**
   * This connection is the file's only user (`PRAGMA locking_mode =
   * EXCLUSIVE`, set before the log is opened): it takes the file's locks
   * once and keeps them, so a transaction makes no locking system call
   * (about 70 a run, measured), the write-ahead log's index lives in this
   * process's memory (no `-shm` file), and nothing another connection does
   * can change what it reads (`PRAGMA data_version` need not be asked).
   * Another process that opens the file meanwhile is refused: SQLite's busy
   * error. Ignored for `:memory:`. @default false (shared)
   */
  readonly exclusive?: boolean | undefined;
  /** How a file's write-ahead log is synced in the background (`wal-sync.ts`): its defaults, but for tests. */
  readonly walSync?: WalSyncOptions | undefined;
}

/**
 * SQLite's own busy timeout is off after the setup: its handler sleeps inside the call,
 * blocking the event loop, and polls so rarely that a process writing in a
 * loop starves the others (measured: 0 of 1,000 claims). A transaction that
 * finds the database locked is retried on the event loop instead (see
 * {@link backoff}), writes of this connection in their call order.
 *
 * Group commit: a commit writes every page the transaction changed to the
 * write-ahead log, and a service's writes of one turn of the event loop
 * (one socket read's messages, each handled up to its first await) change
 * the same pages: the tail of a table and of its indexes. So a write that
 * finds no transaction open begins one and commits it at the end of the
 * turn (`setImmediate`); the writes and reads of that turn run inside it,
 * each write after the first in a savepoint of its own, so a failing one
 * undoes only itself. Every one of them settles only once the transaction
 * committed: nothing is acknowledged, nor read, before it is on the log,
 * and when the commit fails they all fail.
 *
 * A file other processes write too (shared locking) is held for less: its
 * transaction commits once the microtasks queued before it ran (the
 * writes made in the same callback and its continuations so far), not at
 * the end of the turn. Held for the turn, the write lock was taken for
 * most of every busy turn, and a second process writing the file (two
 * executors) waited for it through its retries (bench/HISTORY.md,
 * 2026-11-28 17:25).
 *
 * The savepoint, two statements of a write's three or four, is taken only
 * before the write's first change ({@link change}), and not at all for a
 * write whose one change is its last ({@link lastChange}): SQLite undoes a
 * failed statement by itself, so such a write that fails leaves nothing.
 */
export class Connection {
  readonly #db: DatabaseSync;
  readonly #afterCommit: (() => void) | undefined;
  /** Syncs the write-ahead log in the background (none for `:memory:`). */
  readonly #walSync: WalSync | undefined;
  readonly #statements = new Map<string, StatementSync>();
  /** See `ConnectionOptions.exclusive`: no other connection commits to this file. */
  readonly #exclusive: boolean;
  /** A batch commits at the end of the turn; else (a file other processes write) once the microtasks before it ran. */
  readonly #commitsByTurn: boolean;
  #dataVersion = -1;
  #generation = 0;
  /** The writes waiting for the lock, in call order; later writes queue behind them. */
  #writes: Promise<unknown> = Promise.resolve();
  #waitingWrites = 0;
  /** Transactions waiting for the lock or for their batch's commit, for {@link idle}. */
  readonly #waiting = new Set<Promise<unknown>>();
  /** The write transaction this turn's operations share, while open. */
  #batch: Batch | undefined;
  /** The write whose work runs now, inside the batch. */
  #member: Member | undefined;

  /**
   * Opens `location` (a file, or `:memory:`) and creates the metadata
   * tables. Only this setup waits inside SQLite for another process's lock
   * (once, while the store opens); transactions then never do.
   */
  constructor(location: string, options: ConnectionOptions = {}) {
    this.#afterCommit = options.afterCommit;
    this.#exclusive = options.exclusive === true && location !== ':memory:';
    this.#commitsByTurn = this.#exclusive || location === ':memory:';
    this.#db = new DatabaseSync(location, { timeout: BUSY_TIMEOUT_MS });
    this.#walSync = location === ':memory:' ? undefined : new WalSync(`${location}-wal`, options.walSync);
    try {
      // Before the log is opened, so that its index is kept in memory; a savepoint's journal stays there too
      // (otherwise SQLite writes it to a temporary file in this mode).
      if (this.#exclusive) this.#db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY');
      // WAL: readers never block the writer nor each other, across processes; NORMAL syncs at checkpoints only.
      if (location !== ':memory:') {
        this.#db.exec('PRAGMA journal_mode = WAL');
        this.#db.exec(
          `PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}; PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`,
        );
      }
      this.#db.exec(`PRAGMA synchronous = NORMAL; PRAGMA cache_size = -${CACHE_SIZE_KIB}`);
      this.#db.exec(METADATA);
      this.#db.exec('PRAGMA busy_timeout = 0');
    } catch (error) {
      this.#db.close();
      throw error;
    }
  }

  /**
   * Counts the times another connection was seen to have committed, checked
   * at the start of each transaction, and the times a write was rolled back:
   * what this connection caches about the schema (the declared indexes) is
   * stale when it changed.
   */
  get generation(): number {
    return this.#generation;
  }

  /** True while this turn's write batch is open: what a read sees now may never be committed. */
  get writing(): boolean {
    return this.#batch !== undefined;
  }

  /**
   * A stamp of what reads see: it changes when another connection commits
   * (SQLite's `data_version`) or a write here is rolled back (the
   * generation). Writes committed by this connection leave it as it is.
   * Held alone (`exclusive`), no other connection commits: the generation is the stamp.
   */
  readStamp(): string {
    if (this.#exclusive) return String(this.#generation);
    const row = this.statement('PRAGMA data_version').get() as { data_version: number };
    return `${this.#generation}:${row.data_version}`;
  }

  /**
   * The prepared statement for `sql`, prepared once per connection. A
   * statement that changes the database runs through {@link change},
   * {@link lastChange} or {@link exec} instead: they take the write's savepoint.
   */
  statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs SQL without results (DDL), a change of the write running now. */
  exec(sql: string): void {
    this.#protectMember();
    this.#db.exec(sql);
  }

  /** Runs a statement that changes the database, after the savepoint of the write running now. */
  change(sql: string, ...params: SQLInputValue[]): StatementResultingChanges {
    this.#protectMember();
    return this.statement(sql).run(...params);
  }

  /**
   * Runs the last change of the write running now: after it, its work
   * returns without failing. When it is also the write's first change it
   * runs without a savepoint: a statement that fails leaves nothing (SQLite
   * undoes it, or rolls the whole transaction back). Should the work fail
   * after all, the batch is abandoned rather than this change kept.
   */
  lastChange(sql: string, ...params: SQLInputValue[]): StatementResultingChanges {
    const member = this.#member;
    if (member === undefined || member.first || member.savepoint || member.bare) return this.change(sql, ...params);
    const result = this.statement(sql).run(...params);
    if (Number(result.changes) > 0) member.bare = true;
    return result;
  }

  /** Takes the savepoint of the write running now before its first change, when it needs one. */
  #protectMember(): void {
    const member = this.#member;
    if (member === undefined || member.first || member.savepoint) return;
    // A savepoint taken now could not undo the change made without one.
    if (member.bare) throw new Error('a change after the last change of a write');
    this.statement('SAVEPOINT member').run();
    member.savepoint = true;
  }

  /**
   * Runs `work` in a transaction and settles once it committed; when
   * anything throws, nothing of the work stays and it rejects. `work` runs
   * synchronously when the call can begin (or join) a transaction right
   * away: when nothing holds the lock, or this turn's transaction is open.
   * A write begins IMMEDIATE, taking the write lock first, so its reads and
   * writes are atomic across processes. While another connection holds the
   * lock, the transaction is retried for up to {@link BUSY_TIMEOUT_MS},
   * then fails with SQLite's busy error.
   */
  transaction<R>(mode: TransactionMode, work: () => R): Promise<R> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    if (mode === 'write' && this.#waitingWrites > 0) return this.#queueWrite(work, deadline);
    try {
      if (this.#batch !== undefined) return this.#join(mode, work);
      if (mode === 'read') {
        if (this.#tryBegin('read') === null) return Promise.resolve(this.#complete(work));
      } else if (this.#tryBegin('write') === null) {
        return this.#openBatch(work);
      }
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return mode === 'write' ? this.#queueWrite(work, deadline) : this.#track(this.#retry(mode, work, deadline));
  }

  /**
   * Commits the open batch once the microtasks queued so far ran, rather
   * than at the end of the turn (`Store.commitSoon`), while it holds at most
   * {@link COMMIT_SOON_MAX_OPERATIONS} operations; the writes after it open a
   * batch of their own. Nothing when no batch is open, or a larger one is.
   */
  commitSoon(): void {
    const batch = this.#batch;
    if (batch !== undefined && batch.members.length <= COMMIT_SOON_MAX_OPERATIONS) queueMicrotask(batch.commit);
  }

  /**
   * Runs `work`, a read of one statement that needs neither one snapshot
   * across statements nor the generation (a document by its `_id`), in
   * SQLite's autocommit: without the BEGIN, `PRAGMA data_version` and
   * COMMIT around it, three statements of four, which profiles showed as a
   * sixth of the services' CPU in the store. Inside this turn's open batch
   * it joins the batch as any read does (it sees the batch's writes, so it
   * settles with their commit); a busy database takes the transaction's
   * path, retries included.
   */
  readAlone<R>(work: () => R): Promise<R> {
    if (this.#batch !== undefined) return this.transaction('read', work);
    try {
      return Promise.resolve(work());
    } catch (error) {
      return isBusy(error) ? this.transaction('read', work) : Promise.reject(error as Error);
    }
  }

  #queueWrite<R>(work: () => R, deadline: number): Promise<R> {
    this.#waitingWrites += 1;
    const result = this.#writes.then(() => this.#retry('write', work, deadline));
    this.#writes = result.then(
      () => (this.#waitingWrites -= 1),
      () => (this.#waitingWrites -= 1),
    );
    return this.#track(result);
  }

  #track<R>(waiting: Promise<R>): Promise<R> {
    this.#waiting.add(waiting);
    const forget = () => this.#waiting.delete(waiting);
    waiting.then(forget, forget);
    return waiting;
  }

  async #retry<R>(mode: TransactionMode, work: () => R, deadline: number): Promise<R> {
    for (let attempt = 0; ; attempt += 1) {
      if (this.#batch !== undefined) return this.#join(mode, work);
      const busy = this.#tryBegin(mode);
      if (busy === null) return mode === 'write' ? this.#openBatch(work) : this.#complete(work);
      if (Date.now() >= deadline) throw busy;
      await backoff(attempt);
    }
  }

  /**
   * Begins a transaction and takes its snapshot: null when it began, the
   * busy error (nothing begun) when another connection holds the lock.
   */
  #tryBegin(mode: TransactionMode): unknown {
    try {
      this.statement(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN').run();
      this.#noticeChanges();
      return null;
    } catch (error) {
      if (this.#db.isTransaction) this.statement('ROLLBACK').run();
      if (!isBusy(error)) throw error;
      return error;
    }
  }

  /** Runs a read on its own (no batch is open) and ends its transaction at once. */
  #complete<R>(work: () => R): R {
    const started = transactionStarted();
    try {
      const result = work();
      this.statement('COMMIT').run();
      transactionEnded('read', started, true);
      return result;
    } catch (error) {
      // SQLite may have rolled back already (a full disk, an I/O error).
      if (this.#db.isTransaction) this.statement('ROLLBACK').run();
      transactionEnded('read', started, false);
      throw error;
    }
  }

  /** Makes the write transaction that just began this turn's batch, with `work` its first member. */
  #openBatch<R>(work: () => R): Promise<R> {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const batch: Batch = {
      members: [],
      done,
      started: transactionStarted(),
      commit: () => {
        this.#commit(batch);
        this.#waiting.delete(done);
        finish();
      },
    };
    this.#batch = batch;
    this.#waiting.add(batch.done);
    if (this.#commitsByTurn) setImmediate(batch.commit);
    else queueMicrotask(batch.commit); // other processes wait for the write lock: held no longer than this
    // Scheduled now, so it runs later in the same turn than the commit, once what awaited it ran (the
    // event loop runs the promise continuations between two immediates).
    if (this.#afterCommit !== undefined) setImmediate(this.#afterCommit);
    return this.#join('write', work);
  }

  /**
   * Runs `work` inside the open batch, a write after the first in a
   * savepoint (taken at its first change) so that its failure undoes only
   * itself; settles when the batch does.
   */
  #join<R>(mode: TransactionMode, work: () => R): Promise<R> {
    const batch = this.#batch as Batch;
    const member = mode === 'write' ? { first: batch.members.length === 0, savepoint: false, bare: false } : undefined;
    let result: R;
    this.#member = member;
    try {
      result = work();
      if (member?.savepoint === true) this.statement('RELEASE member').run();
    } catch (error) {
      this.#undoMember(batch, member, error);
      return Promise.reject(error as Error);
    } finally {
      this.#member = undefined;
    }
    return new Promise<R>((resolve, reject) => {
      batch.members.push({ settle: () => resolve(result), fail: reject });
    });
  }

  /**
   * Rolls back what a failed member changed: to its savepoint, keeping the
   * batch's transaction open when SQLite did; the whole batch when the
   * member is its first write, changed rows without a savepoint, or SQLite
   * rolled the transaction back (a full disk, an I/O error).
   */
  #undoMember(batch: Batch, member: Member | undefined, error: unknown): void {
    if (member?.first === true || member?.bare === true || !this.#db.isTransaction) {
      this.#abandon(batch, error);
      return;
    }
    if (member === undefined) return; // a read changes nothing
    this.#generation += 1;
    if (!member.savepoint) return; // nothing changed: its one failed statement undid itself
    this.statement('ROLLBACK TO member').run();
    this.statement('RELEASE member').run();
  }

  /** Commits the batch and settles its members; when the commit fails, they all fail. */
  #commit(batch: Batch): void {
    if (this.#batch !== batch) return; // abandoned: its members failed already
    this.#batch = undefined;
    try {
      this.statement('COMMIT').run();
    } catch (error) {
      if (this.#db.isTransaction) this.statement('ROLLBACK').run();
      this.#generation += 1;
      transactionEnded('write', batch.started, false);
      for (const member of batch.members) member.fail(error);
      return;
    }
    transactionEnded('write', batch.started, true);
    this.#walSync?.committed();
    for (const member of batch.members) member.settle();
  }

  /** Ends the batch's transaction without committing: every member so far fails with `error`. */
  #abandon(batch: Batch, error: unknown): void {
    this.#batch = undefined;
    this.#generation += 1;
    if (this.#db.isTransaction) this.statement('ROLLBACK').run();
    transactionEnded('write', batch.started, false);
    for (const member of batch.members) member.fail(error);
  }

  /** Resolves once no transaction waits for the lock. */
  async idle(): Promise<void> {
    while (this.#waiting.size > 0) await Promise.allSettled([...this.#waiting]);
  }

  /** Reads the data version: this takes the transaction's snapshot, so what it reads agrees with the generation. */
  #noticeChanges(): void {
    if (this.#exclusive) return; // no other connection commits
    const row = this.statement('PRAGMA data_version').get() as { data_version: number };
    if (row.data_version !== this.#dataVersion) {
      this.#dataVersion = row.data_version;
      this.#generation += 1;
    }
  }

  /** Lets SQLite update its planner statistics when it can (best effort), then closes; statements are finalized. */
  close(): void {
    try {
      this.#db.exec('PRAGMA optimize');
    } catch {
      // Another process's lock, or a read-only file: the statistics wait for the next close.
    }
    this.#db.close();
    this.#walSync?.close();
  }
}

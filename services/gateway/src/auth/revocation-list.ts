import { setTimeout as sleep } from 'node:timers/promises';
import { isRevocationLive, parseRevocationEntry } from '@ars/auth';
import { ServiceError } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { Revocation, RevocationCheck } from '../ports.ts';

/** One entry as the KV bucket delivers it (`KvEntry` / `KvWatchEntry` of `@ars/bus`). */
export interface RevocationKvEntry {
  readonly key: string;
  readonly operation: 'PUT' | 'DEL' | 'PURGE';
  string(): string;
}

/** A watch entry: `isUpdate` is false while the watch replays the bucket's last values. */
export interface RevocationKvWatchEntry extends RevocationKvEntry {
  readonly isUpdate: boolean;
}

/** The `ars_revocations` bucket as this list reads it (the `KV` of `@ars/bus` fits). */
export interface RevocationKv {
  get(key: string): Promise<RevocationKvEntry | null>;
  /** Every key's last value, then every change, until stopped. */
  watch(options?: { key?: string }): Promise<AsyncIterable<RevocationKvWatchEntry> & { stop(): void }>;
  /** `values`: messages in the bucket (0: nothing to replay). */
  status(): Promise<{ readonly values: number }>;
}

/** Options of {@link RevocationList}. */
export interface RevocationListOptions {
  /** The bucket; absent: only revocations added by this replica are known (tests, single node). */
  readonly kv?: RevocationKv;
  readonly logger: Logger;
  /** Wall clock in epoch ms. @default Date.now */
  readonly now?: () => number;
  /** First delay before a failed watch is reopened, doubling to 30 s. @default 500 */
  readonly retryMs?: number;
}

/** An entry under a token's key that cannot be read still revokes it (fail closed) until this far ahead. */
const UNREADABLE_HOLD_MS = 365 * 24 * 3_600_000;
/** Expired entries are swept at most this often. */
const SWEEP_EVERY_MS = 60_000;
const MAX_RETRY_MS = 30_000;

interface Waiter {
  readonly keys: readonly string[];
  readonly resolve: (delivered: boolean) => void;
}

/**
 * The revoked tokens every authenticated request is checked against, after
 * signature verification. An in-memory map fed by a watch of the
 * `ars_revocations` bucket (its last values, then every change), so that a
 * rotation served by any replica reaches every replica as soon as JetStream
 * delivers it. Until the watch has replayed the bucket, a lookup asks the
 * bucket directly (`get` per key); a failing `get` fails closed with 503.
 * The replica that served a rotation adds the keys itself at once.
 */
export class RevocationList implements RevocationCheck {
  readonly #options: RevocationListOptions;
  readonly #now: () => number;
  readonly #entries = new Map<string, Revocation>();
  /** Keys the watch delivered (a rotation waits for its own keys to come back). */
  readonly #delivered = new Set<string>();
  readonly #listeners = new Map<string, Set<() => void>>();
  readonly #waiters = new Set<Waiter>();
  #caughtUp = false;
  #stopped = false;
  readonly #abort = new AbortController();
  #watch: { stop(): void } | undefined;
  #running: Promise<void> | undefined;
  #lastSweep = 0;

  constructor(options: RevocationListOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** True once the watch has replayed every stored revocation (lookups no longer ask the bucket). */
  get caughtUp(): boolean {
    return this.#caughtUp || this.#options.kv === undefined;
  }

  /** Starts watching the bucket in the background; the first lookups ask the bucket until it caught up. */
  start(): void {
    if (this.#options.kv === undefined || this.#running !== undefined) return;
    this.#running = this.#follow(this.#options.kv);
  }

  /** Stops the watch. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#watch?.stop();
    await this.#running;
    for (const waiter of this.#waiters) waiter.resolve(false);
    this.#waiters.clear();
  }

  async find(keys: readonly string[]): Promise<Revocation | undefined> {
    this.#sweep();
    for (const key of keys) {
      const entry = this.#entries.get(key);
      if (entry !== undefined && isRevocationLive(entry, this.#now())) return entry;
    }
    const kv = this.#options.kv;
    if (this.caughtUp || kv === undefined) return undefined;
    let found: (RevocationKvEntry | null)[];
    try {
      found = await Promise.all(keys.map((key) => kv.get(key)));
    } catch (error) {
      throw new ServiceError('unavailable', 'token revocations cannot be checked right now; retry shortly', {
        cause: error,
        retryable: true,
      });
    }
    for (const entry of found) {
      if (entry === null || entry.operation !== 'PUT') continue;
      const revocation = this.#read(entry);
      this.#set(entry.key, revocation);
      if (isRevocationLive(revocation, this.#now())) return revocation;
    }
    return undefined;
  }

  add(keys: readonly string[], revocation: Revocation): void {
    for (const key of keys) this.#set(key, revocation);
  }

  awaitDelivered(keys: readonly string[], timeoutMs: number): Promise<boolean> {
    if (this.#options.kv === undefined || this.#stopped) return Promise.resolve(false);
    if (keys.every((key) => this.#delivered.has(key))) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      const waiter: Waiter = { keys, resolve: (delivered) => settle(delivered) };
      const settle = (delivered: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve(delivered);
      };
      this.#waiters.add(waiter);
    });
  }

  onRevoked(keys: readonly string[], listener: () => void): () => void {
    let fired = false;
    const once = () => {
      if (fired) return;
      fired = true;
      off();
      listener();
    };
    const off = () => {
      for (const key of keys) {
        const set = this.#listeners.get(key);
        set?.delete(once);
        if (set?.size === 0) this.#listeners.delete(key);
      }
    };
    for (const key of keys) {
      const set = this.#listeners.get(key) ?? new Set();
      set.add(once);
      this.#listeners.set(key, set);
    }
    return off;
  }

  /** Reads a stored value; one that cannot be read revokes anyway (fail closed). */
  #read(entry: RevocationKvEntry): Revocation {
    let text: string | undefined;
    try {
      text = entry.string();
    } catch {
      text = undefined;
    }
    const parsed = text === undefined ? undefined : parseRevocationEntry(text);
    if (parsed !== undefined) return parsed;
    this.#options.logger.warn({ key: entry.key }, 'unreadable revocation entry; the token stays refused');
    const at = this.#now();
    return {
      reason: 'unreadable',
      revoked_at: new Date(at).toISOString(),
      expires_at: new Date(at + UNREADABLE_HOLD_MS).toISOString(),
      tenant: '',
      user: '',
    };
  }

  #set(key: string, revocation: Revocation): void {
    this.#entries.set(key, revocation);
    const listeners = this.#listeners.get(key);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) listener();
  }

  #sweep(): void {
    const now = this.#now();
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, entry] of this.#entries) {
      if (!isRevocationLive(entry, now)) {
        this.#entries.delete(key);
        this.#delivered.delete(key);
      }
    }
  }

  #apply(entry: RevocationKvWatchEntry): void {
    if (entry.operation === 'PUT') {
      this.#set(entry.key, this.#read(entry));
      this.#delivered.add(entry.key);
    } else {
      this.#entries.delete(entry.key);
      this.#delivered.delete(entry.key);
    }
    if (entry.isUpdate) this.#markCaughtUp();
    for (const waiter of this.#waiters) {
      if (waiter.keys.every((key) => this.#delivered.has(key))) waiter.resolve(true);
    }
  }

  #markCaughtUp(): void {
    if (this.#caughtUp) return;
    this.#caughtUp = true;
    this.#options.logger.info({ revocations: this.#entries.size }, 'revocation watch caught up');
  }

  /** Watches until stopped; a watch that ends or fails is reopened (lookups ask the bucket meanwhile). */
  async #follow(kv: RevocationKv): Promise<void> {
    let delay = this.#options.retryMs ?? 500;
    while (!this.#stopped) {
      try {
        const { values } = await kv.status();
        const watch = await kv.watch({ key: '>' });
        this.#watch = watch;
        if (this.#stopped) watch.stop();
        if (values === 0) this.#markCaughtUp();
        delay = this.#options.retryMs ?? 500;
        for await (const entry of watch) this.#apply(entry);
      } catch (error) {
        if (!this.#stopped) this.#options.logger.warn({ err: error }, 'revocation watch failed; reopening it');
      }
      this.#caughtUp = false;
      this.#watch = undefined;
      if (this.#stopped) return;
      await sleep(delay, undefined, { signal: this.#abort.signal }).catch(() => undefined);
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }
}

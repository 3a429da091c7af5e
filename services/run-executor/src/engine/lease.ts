import { LEASES_BUCKET, encodeToken, headers, openKv } from '@ars/bus';
import type { Bus, KV } from '@ars/bus';
import type { JsPipeline } from './event-pipeline.ts';

/**
 * Run leases in KV bucket `ars_leases`: key = the encoded task id, value =
 * `{ owner, expires_at }`. Taking a lease is a create (or, once the holder's
 * lease has expired, an update at the revision read: compare-and-set), so at
 * most one executor holds a run at a time. Holders refresh every lease they
 * hold on one shared timer (never one timer per run); a lease whose holder
 * died expires after `ttlMs` of wall-clock time. The common operations (a
 * fresh claim, a refresh, a release) are pipelined publishes on the bucket's
 * subject with `Nats-Expected-Last-Subject-Sequence` (the KV protocol's own
 * compare-and-set); only taking over an existing entry reads it first.
 */

/** A held lease. */
export interface Lease {
  readonly taskId: string;
  readonly key: string;
  revision: number;
}

/** The outcome of {@link LeaseManager.acquire}. */
export type AcquireResult =
  | { readonly ok: true; readonly lease: Lease }
  | { readonly ok: false; readonly holder: string; readonly retryInMs: number };

export interface LeaseManager {
  acquire(taskId: string): Promise<AcquireResult>;
  /** Extends every held lease; a lease that another executor took is reported through `onLost`. */
  refreshAll(): Promise<void>;
  /** Gives the lease up (best effort: an expired lease is someone else's to take anyway). */
  release(lease: Lease): Promise<void>;
}

interface LeaseValue {
  readonly owner: string;
  readonly expires_at: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function parseValue(data: Uint8Array): LeaseValue | undefined {
  try {
    const value = JSON.parse(decoder.decode(data)) as Partial<LeaseValue>;
    if (typeof value.owner === 'string' && typeof value.expires_at === 'number') {
      return { owner: value.owner, expires_at: value.expires_at };
    }
  } catch {
    // A malformed lease counts as free.
  }
  return undefined;
}

/** Options of {@link createLeaseManager}. */
export interface LeaseOptions {
  readonly owner: string;
  readonly ttlMs: number;
  readonly onLost: (taskId: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Opens the lease bucket and returns this executor's lease manager. */
export async function createLeaseManager(bus: Bus, js: JsPipeline, options: LeaseOptions): Promise<LeaseManager> {
  const kv: KV = await openKv(bus, LEASES_BUCKET);
  const subjectOf = (key: string): string => `$KV.${LEASES_BUCKET}.${key}`;
  /** A compare-and-set write: `expected` is the entry's current revision (0: no entry). */
  const put = (key: string, data: Uint8Array, expected: number, purge = false): Promise<number> => {
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', String(expected));
    if (purge) {
      h.set('KV-Operation', 'PURGE');
      h.set('Nats-Rollup', 'sub');
    }
    return js.send(subjectOf(key), data, h);
  };
  const now = options.now ?? Date.now;
  const held = new Map<string, Lease>();
  const value = (): Uint8Array =>
    encoder.encode(JSON.stringify({ owner: options.owner, expires_at: now() + options.ttlMs }));

  async function takeOver(taskId: string, key: string): Promise<AcquireResult> {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== 'PUT') {
      const revision = await kv.create(key, value());
      return { ok: true, lease: { taskId, key, revision } };
    }
    const current = parseValue(entry.value);
    if (current !== undefined && current.owner !== options.owner && current.expires_at > now()) {
      return { ok: false, holder: current.owner, retryInMs: current.expires_at - now() };
    }
    const revision = await kv.update(key, value(), entry.revision);
    return { ok: true, lease: { taskId, key, revision } };
  }

  return {
    async acquire(taskId): Promise<AcquireResult> {
      const key = encodeToken(taskId);
      let result: AcquireResult;
      try {
        result = { ok: true, lease: { taskId, key, revision: await put(key, value(), 0) } };
      } catch {
        try {
          result = await takeOver(taskId, key);
        } catch {
          // Lost a compare-and-set race: someone else just took it.
          return { ok: false, holder: 'unknown', retryInMs: 1_000 };
        }
      }
      if (result.ok) held.set(taskId, result.lease);
      return result;
    },

    async refreshAll(): Promise<void> {
      await Promise.all(
        [...held.values()].map(async (lease) => {
          try {
            lease.revision = await put(lease.key, value(), lease.revision);
          } catch {
            // A failed update is lost only when the entry now names another owner;
            // a transient failure keeps the lease and the next round retries.
            const entry = await kv.get(lease.key).catch(() => undefined);
            if (entry === undefined || held.get(lease.taskId) !== lease) return;
            const current = entry === null ? undefined : parseValue(entry.value);
            if (entry !== null && entry.operation === 'PUT' && current?.owner === options.owner) {
              lease.revision = entry.revision;
              return;
            }
            held.delete(lease.taskId);
            options.onLost(lease.taskId);
          }
        }),
      );
    },

    async release(lease): Promise<void> {
      if (held.get(lease.taskId) === lease) held.delete(lease.taskId);
      await put(lease.key, new Uint8Array(0), lease.revision, true).catch(() => undefined);
    },
  };
}

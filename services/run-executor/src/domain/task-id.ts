import { randomUUID } from 'node:crypto';

/**
 * Task ids are RFC 9562 version 7 UUIDs: 48 bits of Unix time in
 * milliseconds, then the version, the variant and 74 random bits. A task
 * started later gets a larger id, so every index keyed by a task id (the
 * tasks' `_id`, run states, run leases, the session's task rows, the
 * governance cost records keyed by `<task>:<step>:<attempt>`) takes a new
 * task's key at its right edge, where the previous one went, instead of on
 * a random page: the embedded store then writes one page per index and
 * commit where random (version 4) ids wrote one page per new task, and a
 * MongoDB `_id` index gets the same locality. The id tells when the task was
 * created, to the millisecond, which `created_at` tells every reader of the
 * task anyway. Node 24's `crypto.randomUUIDv7` came in 24.16; the project
 * runs on Node 22.18 and later, so it is written out here.
 */

/** The largest instant the 48-bit time field holds. */
const MAX_TIME = 2 ** 48 - 1;

/** A new task id: a version 7 UUID for the instant `nowMs` (default now). */
export function newTaskId(nowMs: number = Date.now()): string {
  const time = Math.min(MAX_TIME, Math.max(0, Math.floor(nowMs)))
    .toString(16)
    .padStart(12, '0');
  // A version 4 UUID's random bits past its version digit (Node buffers their randomness; a
  // `randomFillSync` call asks the system each time): rand_a's 12 bits, the variant already set
  // (10xx), rand_b's 62 bits: `xxx-Vxxx-xxxxxxxxxxxx`.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`;
}

/** The Unix milliseconds a {@link newTaskId} id was made at. */
export function taskIdTime(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

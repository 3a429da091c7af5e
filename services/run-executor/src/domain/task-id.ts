import { randomFillSync } from 'node:crypto';

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

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** A new task id: a version 7 UUID for the instant `nowMs` (default now). */
export function newTaskId(nowMs: number = Date.now()): string {
  const bytes = randomFillSync(new Uint8Array(16));
  let time = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i -= 1) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  let id = '';
  for (let i = 0; i < 16; i += 1) {
    if (i === 4 || i === 6 || i === 8 || i === 10) id += '-';
    id += HEX[bytes[i] as number];
  }
  return id;
}

/** The Unix milliseconds a {@link newTaskId} id was made at. */
export function taskIdTime(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

import { setTimeout } from 'node:timers/promises';
import { LAGGING_REPLICA_RETRIES, LAGGING_REPLICA_RETRY_MS } from '@ars/bus';
import { ServiceError } from '@ars/contracts';
import type { EventLog, EventRecord } from '../ports.ts';

/**
 * Bounded scans of the EVENTS stream for events.list, events.aggregate and
 * search.events, and their opaque page cursors.
 */

/**
 * How far a message's stored time may lie from its `occurred_at`. Time
 * windows apply to `occurred_at`; the stream is positioned by stored time,
 * widened by this margin on both ends.
 */
export const TIME_MARGIN_MS = 60_000;

/** Why a scan ended. */
export type ScanEnd = 'end' | 'stopped' | 'budget';

/** The outcome of {@link scanForward}. */
export interface ScanOutcome {
  readonly end: ScanEnd;
  /** Records read. */
  readonly count: number;
  /** The last record read (the one `visit` stopped at, for `stopped`). */
  readonly last: EventRecord | undefined;
  /** For `stopped`: whether matching records follow the last one. */
  readonly more: boolean;
}

/** Where a forward scan starts and what it reads. */
export interface ScanOptions {
  readonly filterSubject: string;
  readonly startSequence?: number | undefined;
  readonly startTime?: Date | undefined;
  /** Most records read. */
  readonly budget: number;
}

/**
 * Reads matching records oldest first, handing each to `visit` until it
 * returns false, the stream ends, or `budget` records were read.
 *
 * A read ends at the first record JetStream delivers with a pending count of
 * 0, and that running count can fall short while the stream is appended to:
 * the end is confirmed by a fresh read after the last record, whose count at
 * creation comes from the stored messages, and the scan goes on when it
 * finds more. A read's consumer may also sit on a replica still catching up
 * after a restart, which sees the stream short: an end is confirmed with the
 * stream's leader (`nextStored`), and while the leader holds matching records
 * the reads do not deliver, the scan reads again every
 * {@link LAGGING_REPLICA_RETRY_MS}, then answers `unavailable` (retryable)
 * after {@link LAGGING_REPLICA_RETRIES} tries rather than a short list.
 */
export async function scanForward(
  log: EventLog,
  options: ScanOptions,
  visit: (record: EventRecord) => boolean,
): Promise<ScanOutcome> {
  const batch = Math.max(1, Math.min(options.budget, 1024));
  const leaderHolds = async (fromSequence: number): Promise<boolean> =>
    (await log.nextStored({ filterSubject: options.filterSubject, fromSequence })) !== undefined;
  // A count of 0 is confirmed the same way as the end of a read, then with the leader.
  const more = async (record: EventRecord): Promise<boolean> => {
    if (record.pending > 0) return true;
    const after = await log.read({ filterSubject: options.filterSubject, startSequence: record.seq + 1, batch: 1 });
    await after.close();
    return after.pendingAtStart > 0 || leaderHolds(record.seq + 1);
  };
  let lagging = 0;
  let position: { startSequence?: number; startTime?: Date } = {
    ...(options.startSequence === undefined ? {} : { startSequence: options.startSequence }),
    ...(options.startTime === undefined ? {} : { startTime: options.startTime }),
  };
  let count = 0;
  let last: EventRecord | undefined;
  for (;;) {
    const reader = await log.read({ filterSubject: options.filterSubject, ...position, batch });
    const before = count;
    try {
      for await (const record of reader) {
        count += 1;
        last = record;
        if (!visit(record)) return { end: 'stopped', count, last, more: await more(record) };
        if (count >= options.budget) {
          const further = await more(record);
          return { end: further ? 'budget' : 'end', count, last, more: further };
        }
        if (record.pending === 0) break;
      }
    } finally {
      await reader.close();
    }
    if (count > before) lagging = 0;
    else {
      // Nothing more delivered. From a known sequence, the leader says whether that is the end.
      const from = last === undefined ? position.startSequence : last.seq + 1;
      if (from === undefined || !(await leaderHolds(from))) return { end: 'end', count, last, more: false };
      if (++lagging > LAGGING_REPLICA_RETRIES) {
        throw new ServiceError('unavailable', 'the event stream is catching up after a restart of a NATS node; retry');
      }
      await setTimeout(LAGGING_REPLICA_RETRY_MS);
    }
    if (last !== undefined) position = { startSequence: last.seq + 1 };
  }
}

interface CursorBody {
  readonly m: string;
  readonly s: number;
}

/** An opaque page cursor of `method` pointing at stream sequence `sequence`. */
export function encodeCursor(method: string, sequence: number): string {
  const body: CursorBody = { m: method, s: sequence };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The sequence of a cursor made by {@link encodeCursor} for `method`; anything else is 400 `invalid_request`. */
export function decodeCursor(method: string, cursor: string): number {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const parsed = body as Partial<CursorBody> | undefined;
  if (parsed?.m !== method || !Number.isSafeInteger(parsed.s) || (parsed.s as number) < 0) {
    throw new ServiceError('invalid_request', `cursor is not a next_cursor of ${method}`);
  }
  return parsed.s as number;
}

/** Epoch ms of an RFC 3339 member, `undefined` when absent. */
export function instant(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Date.parse(value);
}

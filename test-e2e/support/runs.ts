import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { EventLog } from './event-log.ts';

/** What `start` answers. */
export interface Started {
  readonly task_id: string;
  readonly reused: boolean;
}

/** A started run and its own event stream (from before its start, so nothing is missed). */
export interface WatchedRun {
  readonly taskId: string;
  readonly log: EventLog;
}

/** The EVENTS stream's last sequence now (tasks.list reports it): a cursor from which nothing later is missed. */
export async function streamCursor(client: ArsClient, session?: string): Promise<number> {
  const list = await client.call<{ sequence: number }>(
    'tasks.list',
    { identity: {}, limit: 1 },
    session === undefined ? {} : { session },
  );
  return list.sequence;
}

/**
 * Starts a run and subscribes to its events (X-Service-Run) from a cursor
 * read before the start: `log` holds every event of the run, in order.
 */
export async function startWatched(
  client: ArsClient,
  body: Record<string, unknown>,
  options: { readonly session?: string } = {},
): Promise<WatchedRun> {
  const callOptions = options.session === undefined ? {} : { session: options.session };
  const cursor = await streamCursor(client, options.session);
  const started = await client.call<Started>('start', { identity: {}, ...body }, callOptions);
  const log = new EventLog(client, { run: started.task_id, lastEventId: cursor, ...callOptions });
  return { taskId: started.task_id, log };
}

/** Every stored event of one run (events.list, all pages), oldest first. */
export async function storedRunEvents(client: ArsClient, run: string, session?: string): Promise<EventFrame[]> {
  return storedEvents(client, { run, ...(session === undefined ? {} : { session }) }, session);
}

/** Every stored event matching `filter` (events.list, all pages), oldest first. */
export async function storedEvents(
  client: ArsClient,
  filter: Record<string, unknown>,
  session?: string,
): Promise<EventFrame[]> {
  const frames: EventFrame[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call<{ items: EventFrame[]; next_cursor?: string }>(
      'events.list',
      { identity: {}, filter, limit: 500, ...(cursor === undefined ? {} : { cursor }) },
      session === undefined ? {} : { session },
    );
    frames.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== undefined);
  return frames;
}

/**
 * A later run of the same session, started and finished: once its terminal
 * event is on the stream, whatever an earlier run of the executor still had
 * to publish has had a full run's time to arrive. Used before counting.
 */
export async function barrierRun(client: ArsClient, session?: string): Promise<void> {
  const run = await startWatched(client, { query: '#script finish:barrier' }, session === undefined ? {} : { session });
  try {
    await run.log.terminal();
  } finally {
    await run.log.close();
  }
}

/** The error a call rejects with (fails the test when it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { status, code, message } = error as { status: number; code: string; message: string };
    return { status, code, message };
  }
  throw new Error('the call was expected to be refused, but it succeeded');
}

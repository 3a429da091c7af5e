import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus, EventLookup, EventRecord } from '../src/index.ts';

/**
 * Records `'write'` in `events` at each socket write of `bus`'s connection
 * from now on (nats-core's transport, an internal), and returns `events`.
 */
export function recordWrites(bus: Bus, events: string[] = []): string[] {
  const transport = (bus.nc as unknown as { protocol: { transport: { send(frame: Uint8Array): unknown } } }).protocol
    .transport;
  const send = transport.send.bind(transport);
  transport.send = (frame) => {
    events.push('write');
    return send(frame);
  };
  return events;
}

/** A temporary directory removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `ars-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

type FieldKind = 'string' | 'number' | 'boolean' | 'array' | 'any';

/**
 * A stand-in for a zod object schema (the bus does not depend on zod): the
 * same `shape` and `safeParse` surface the publisher and redactor use.
 */
export function fakeObjectSchema(fields: Record<string, FieldKind>): EventLookupRow['payload'] {
  const check = (kind: FieldKind, v: unknown): boolean =>
    kind === 'any' || (kind === 'array' ? Array.isArray(v) : typeof v === kind);
  const schema = {
    shape: Object.fromEntries(Object.keys(fields).map((k) => [k, {}])),
    safeParse(value: unknown) {
      const issues: { path: string[]; message: string }[] = [];
      if (typeof value !== 'object' || value === null) issues.push({ path: [], message: 'expected object' });
      else {
        const record = value as Record<string, unknown>;
        for (const [k, kind] of Object.entries(fields)) {
          if (!check(kind, record[k])) issues.push({ path: [k], message: `expected ${kind}` });
        }
      }
      return issues.length === 0 ? { success: true, data: value } : { success: false, error: { issues } };
    },
  };
  return schema as unknown as EventLookupRow['payload'];
}

type EventLookupRow = NonNullable<ReturnType<EventLookup>>;

/** A small registry: one safe type, one redacted notification, one redacted type whose redaction fails. */
export function fakeRegistry(): EventLookup {
  const rows: EventLookupRow[] = [
    { type: 'task.started', class: 'safe', payload: fakeObjectSchema({ TaskID: 'string', PriorState: 'string' }) },
    {
      type: 'notification.task_failed',
      class: 'redacted',
      payload: fakeObjectSchema({
        Class: 'string',
        Severity: 'string',
        Summary: 'string',
        DeepLink: 'string',
        TaskID: 'string',
      }),
    },
    // Declares no object shape: the redactor cannot derive a map and must fail.
    {
      type: 'runtime.error',
      class: 'redacted',
      payload: { safeParse: (v: unknown) => ({ success: true, data: v }) } as unknown as EventLookupRow['payload'],
    },
    {
      type: 'audit.redaction_failed',
      class: 'safe',
      payload: fakeObjectSchema({ OriginalType: 'string', Reason: 'string' }),
    },
  ];
  return (type) => rows.find((r) => r.type === type);
}

/** A tail read in the background: what it delivered so far, and a wait for a count of records. */
export interface FollowedTail {
  readonly seen: EventRecord[];
  /** Waits until `count` records arrived or `timeoutMs` passed (the caller asserts what came). */
  until(count: number, timeoutMs: number): Promise<void>;
  /** Resolves once the tail's iteration ends (after `close()`). */
  readonly done: Promise<void>;
}

/** Reads `tail` in the background into `seen`. */
export function followTail(tail: AsyncIterable<EventRecord>): FollowedTail {
  const seen: EventRecord[] = [];
  const done = (async () => {
    for await (const record of tail) seen.push(record);
  })();
  return {
    seen,
    done,
    async until(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (seen.length < count && Date.now() < deadline) await sleep(25);
    },
  };
}

/**
 * Waits until `stream` has a leader and every one of its `replicas` peers is
 * online and current. A node restarted a moment ago catches up first; killing
 * another node before it has would leave the stream without a quorum, which
 * tests of a single node's loss do not mean to test.
 */
export async function untilStreamHealthy(
  bus: Bus,
  stream: string,
  replicas: number,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const cluster = (await bus.jsm.streams.info(stream)).cluster;
      const peers = cluster?.replicas ?? [];
      const healthy = peers.filter((peer) => peer.current && !peer.offline).length;
      if (cluster?.leader !== undefined && healthy === replicas - 1) return;
      last = `leader ${cluster?.leader ?? 'none'}, ${healthy} of ${replicas - 1} followers current`;
    } catch (error) {
      last = String(error);
    }
    await sleep(100);
  }
  throw new Error(`stream ${stream} did not become healthy in ${timeoutMs} ms: ${last}`);
}

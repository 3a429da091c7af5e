import { nanos } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { ObjectStore } from '@nats-io/obj';
import type { Bus } from './connection.ts';

/** The event log: every published event, subjects `ars.ev.>`. */
export const EVENTS_STREAM = 'EVENTS';
/** The run queue: start messages, work-queue retention, subjects `ars.runs.>`. */
export const RUNS_STREAM = 'RUNS';
/** KV bucket of fleet (agent) registrations. */
export const FLEET_BUCKET = 'ars_fleet';
/** KV bucket of revoked token ids. */
export const REVOCATIONS_BUCKET = 'ars_revocations';
/** Object store of artifact bytes. */
export const ARTIFACTS_OBJECT_STORE = 'ars_artifacts';
/** Deduplication window of both streams: a `Nats-Msg-Id` seen within it is dropped. */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** Default age limit of the EVENTS stream: 7 days. */
export const DEFAULT_EVENTS_MAX_AGE_MS = 7 * 24 * 60 * 60_000;

/** Options of {@link ensureInfrastructure}. */
export interface InfrastructureOptions {
  /** Age limit of EVENTS in milliseconds; 0 means unlimited. @default 7 days */
  readonly eventsMaxAgeMs?: number;
  /** Size limit of EVENTS in bytes; -1 means unlimited. @default -1 */
  readonly eventsMaxBytes?: number;
  /** Replicas of every stream, bucket and store (3 on a cluster). @default 1 */
  readonly replicas?: number;
  /**
   * Leave an existing EVENTS stream's age and size limits as they are (they
   * still apply when the stream is created). Services other than the gateway
   * pass true: retention is the gateway's configuration, and a service booting
   * with defaults must not undo it. @default false
   */
  readonly keepEventsRetention?: boolean;
}

/** What {@link ensureInfrastructure} did to each stream. */
export type StreamOutcome = 'created' | 'updated' | 'unchanged';
export interface InfrastructureReport {
  readonly streams: Readonly<Record<string, StreamOutcome>>;
}

type DesiredStream = Pick<
  StreamConfig,
  | 'name'
  | 'subjects'
  | 'retention'
  | 'storage'
  | 'max_age'
  | 'max_bytes'
  | 'duplicate_window'
  | 'num_replicas'
  | 'description'
>;

/** Members the server lets an update change; a difference in the others is refused. */
const MUTABLE = ['subjects', 'max_age', 'max_bytes', 'duplicate_window', 'num_replicas', 'description'] as const;
const IMMUTABLE = ['retention', 'storage'] as const;

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (error) {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  }
}

function differs(
  current: StreamConfig,
  desired: DesiredStream,
  key: (typeof MUTABLE)[number] | (typeof IMMUTABLE)[number],
): boolean {
  return JSON.stringify(current[key] ?? null) !== JSON.stringify(desired[key] ?? null);
}

async function ensureStream(jsm: JetStreamManager, desired: DesiredStream, retry = true): Promise<StreamOutcome> {
  const info = await streamInfo(jsm, desired.name);
  if (info === undefined) {
    try {
      await jsm.streams.add(desired);
      return 'created';
    } catch (error) {
      // Another service created it between our info and add: reconcile once.
      if (retry && error instanceof JetStreamApiError) return ensureStream(jsm, desired, false);
      throw error;
    }
  }
  const wrong = IMMUTABLE.filter((k) => differs(info.config, desired, k));
  if (wrong.length > 0) {
    const detail = wrong.map((k) => `${k} is ${String(info.config[k])}, expected ${String(desired[k])}`).join('; ');
    throw new Error(
      `stream ${desired.name} exists with an incompatible configuration (${detail}); delete or migrate it`,
    );
  }
  if (!MUTABLE.some((k) => differs(info.config, desired, k))) return 'unchanged';
  const { name, retention: _r, storage: _s, ...update } = desired;
  await jsm.streams.update(name, update);
  return 'updated';
}

/**
 * Creates, or brings up to date, everything the service needs on JetStream:
 * streams EVENTS and RUNS (file storage, 2-minute duplicate window), KV buckets
 * `ars_fleet`, `ars_revocations` and object store
 * `ars_artifacts`. Idempotent and safe to run from every service at boot;
 * changed limits (for example the EVENTS age) are applied by a stream update.
 */
export async function ensureInfrastructure(
  bus: Bus,
  options: InfrastructureOptions = {},
): Promise<InfrastructureReport> {
  const replicas = options.replicas ?? 1;
  const maxAgeMs = options.eventsMaxAgeMs ?? DEFAULT_EVENTS_MAX_AGE_MS;
  const events: DesiredStream = {
    name: EVENTS_STREAM,
    description: 'Agent Run Service events',
    subjects: ['ars.ev.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: maxAgeMs > 0 ? nanos(maxAgeMs) : 0,
    max_bytes: options.eventsMaxBytes ?? -1,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  };
  const runs: DesiredStream = {
    name: RUNS_STREAM,
    description: 'Agent Run Service run queue',
    subjects: ['ars.runs.>'],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_age: 0,
    max_bytes: -1,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
  };
  if (options.keepEventsRetention === true) {
    const current = await streamInfo(bus.jsm, EVENTS_STREAM);
    if (current !== undefined) {
      events.max_age = current.config.max_age;
      events.max_bytes = current.config.max_bytes;
    }
  }
  const streams: Record<string, StreamOutcome> = {};
  streams[EVENTS_STREAM] = await ensureStream(bus.jsm, events);
  streams[RUNS_STREAM] = await ensureStream(bus.jsm, runs);

  const kvm = new Kvm(bus.js);
  for (const bucket of [FLEET_BUCKET, REVOCATIONS_BUCKET]) {
    await withRetry(() => kvm.create(bucket, { history: 1, storage: StorageType.File, replicas }));
  }
  await withRetry(() => new Objm(bus.js).create(ARTIFACTS_OBJECT_STORE, { storage: StorageType.File, replicas }));
  return { streams };
}

/** KV and object-store creation race when several services boot at once; a second try opens the winner's. */
async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch {
    return fn();
  }
}

/** Opens a KV bucket that {@link ensureInfrastructure} created (`FLEET_BUCKET`, …). */
export function openKv(bus: Bus, bucket: string): Promise<KV> {
  return new Kvm(bus.js).open(bucket);
}

/** Opens the artifact object store (or another one) that {@link ensureInfrastructure} created. */
export function openObjectStore(bus: Bus, name: string = ARTIFACTS_OBJECT_STORE): Promise<ObjectStore> {
  return new Objm(bus.js).open(name);
}

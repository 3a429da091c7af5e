import { nanos } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { ObjectStore } from '@nats-io/obj';
import type { Logger } from '@ars/telemetry';
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
  /**
   * Replicas of every stream, bucket and store: 1 on a single server, 3 on a
   * 3-node cluster. An existing stream, bucket or store with another count is
   * scaled to it (nats-server 2.9 moves the data; its consumers follow). Every
   * process should pass the same value: each boot applies its own. @default 1
   */
  readonly replicas?: number;
  /**
   * Leave an existing EVENTS stream's age and size limits as they are (they
   * still apply when the stream is created). Services other than the gateway
   * pass true: retention is the gateway's configuration, and a service booting
   * with defaults must not undo it. @default false
   */
  readonly keepEventsRetention?: boolean;
  /** Told (at warn) when a replica count changes: two processes passing different counts show here. */
  readonly logger?: Logger;
}

/** What {@link ensureInfrastructure} did to each stream. */
export type StreamOutcome = 'created' | 'updated' | 'unchanged';
export interface InfrastructureReport {
  /** EVENTS and RUNS. */
  readonly streams: Readonly<Record<string, StreamOutcome>>;
  /** The backing streams of the KV buckets and the object store: `KV_<bucket>`, `OBJ_<store>`. */
  readonly buckets: Readonly<Record<string, StreamOutcome>>;
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

function warnOfReplicaChange(logger: Logger | undefined, stream: string, from: number, to: number): void {
  logger?.warn({ stream, from, to }, 'changing the replica count of a JetStream stream');
}

/** Names the stream and the replica count in a server's refusal (e.g. more replicas than the cluster has servers). */
async function explained<T>(stream: string, replicas: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof JetStreamApiError)) throw error;
    throw new Error(`JetStream refused stream ${stream} with ${replicas} replica(s): ${error.message}`, {
      cause: error,
    });
  }
}

/**
 * A single nats-server refuses to create a stream with more than one replica
 * but accepts an update to more (2.9: the config then claims replicas the
 * server does not keep), so the count is checked against the server itself.
 */
function refuseReplicasWithoutCluster(bus: Bus, replicas: number): void {
  const info = bus.nc.info;
  if (replicas <= 1 || info === undefined || (info.cluster ?? '') !== '') return;
  throw new Error(
    `JetStream replicas ${replicas} need a clustered nats-server; ${info.server_name} is not part of a cluster (use 1)`,
  );
}

async function ensureStream(
  jsm: JetStreamManager,
  desired: DesiredStream,
  logger: Logger | undefined,
  retry = true,
): Promise<StreamOutcome> {
  const info = await streamInfo(jsm, desired.name);
  if (info === undefined) {
    try {
      await jsm.streams.add(desired);
      return 'created';
    } catch (error) {
      // Another service created it between our info and add: reconcile once.
      if (retry && error instanceof JetStreamApiError) return ensureStream(jsm, desired, logger, false);
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
  if (differs(info.config, desired, 'num_replicas')) {
    warnOfReplicaChange(logger, desired.name, info.config.num_replicas, desired.num_replicas);
  }
  const { name, retention: _r, storage: _s, ...update } = desired;
  await jsm.streams.update(name, update);
  return 'updated';
}

/**
 * Creates a KV bucket or object store through `create`, or scales its
 * backing `stream` to `replicas`: the clients' `create` opens an existing
 * one as it is, whatever replica count it asks for.
 */
async function ensureBucket(
  jsm: JetStreamManager,
  stream: string,
  replicas: number,
  create: () => Promise<unknown>,
  logger: Logger | undefined,
): Promise<StreamOutcome> {
  const before = await streamInfo(jsm, stream);
  if (before === undefined) await withRetry(create);
  // Created here, or by another process booting at once (perhaps with another count).
  const info = before ?? (await jsm.streams.info(stream));
  if (info.config.num_replicas === replicas) return before === undefined ? 'created' : 'unchanged';
  warnOfReplicaChange(logger, stream, info.config.num_replicas, replicas);
  await jsm.streams.update(stream, { num_replicas: replicas });
  return 'updated';
}

/**
 * Creates, or brings up to date, everything the service needs on JetStream:
 * streams EVENTS and RUNS (file storage, 2-minute duplicate window), KV buckets
 * `ars_fleet`, `ars_revocations` and object store
 * `ars_artifacts`, each with `replicas` replicas. Idempotent and safe to run
 * from every service at boot; changed limits (for example the EVENTS age) and
 * a changed replica count are applied by a stream update. More than one
 * replica on a server outside a cluster, or a count the cluster cannot place,
 * fails with an error naming the count.
 */
export async function ensureInfrastructure(
  bus: Bus,
  options: InfrastructureOptions = {},
): Promise<InfrastructureReport> {
  const replicas = options.replicas ?? 1;
  refuseReplicasWithoutCluster(bus, replicas);
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
  const { jsm } = bus;
  const { logger } = options;
  const streams: Record<string, StreamOutcome> = {};
  for (const desired of [events, runs]) {
    streams[desired.name] = await explained(desired.name, replicas, () => ensureStream(jsm, desired, logger));
  }

  const buckets: Record<string, StreamOutcome> = {};
  const kvm = new Kvm(bus.js);
  for (const bucket of [FLEET_BUCKET, REVOCATIONS_BUCKET]) {
    const stream = `KV_${bucket}`;
    const create = () => kvm.create(bucket, { history: 1, storage: StorageType.File, replicas });
    buckets[stream] = await explained(stream, replicas, () => ensureBucket(jsm, stream, replicas, create, logger));
  }
  const objects = `OBJ_${ARTIFACTS_OBJECT_STORE}`;
  const createObjects = () => new Objm(bus.js).create(ARTIFACTS_OBJECT_STORE, { storage: StorageType.File, replicas });
  buckets[objects] = await explained(objects, replicas, () =>
    ensureBucket(jsm, objects, replicas, createObjects, logger),
  );
  return { streams, buckets };
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

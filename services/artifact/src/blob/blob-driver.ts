/**
 * Where artifact bytes live. The artifact service stores metadata in its
 * document store and bytes through one of these drivers; the JetStream object
 * store driver is the default. Keys are opaque to callers (`blobs/<uuid>`).
 */

/** What a driver knows about stored bytes. */
export interface BlobInfo {
  /** Length in bytes. */
  readonly size_bytes: number;
  /** SHA-256 of the bytes, lowercase hex. */
  readonly sha256: string;
}

/**
 * A place on the bus where a trusted peer (the gateway) may write or read the
 * bytes of `object_name` directly, streaming, without passing them through
 * one RPC message: a JetStream object store entry.
 */
export interface BlobLocation {
  readonly transport: 'nats_object_store';
  /** The object store bucket (`ars_artifacts`). */
  readonly bucket: string;
  /** The entry name inside the bucket. */
  readonly object_name: string;
}

/** A time-limited URL to the bytes. */
export interface PresignedRef {
  readonly url: string;
  /** RFC 3339. */
  readonly expires_at: string;
}

/** Bytes to store: a stream (never held whole in memory) or a buffer already in hand. */
export type BlobSource = ReadableStream<Uint8Array> | Uint8Array;

/** The blob driver port. Every method may throw; callers map failures to `internal`/`unavailable`. */
export interface BlobDriver {
  /** Reported in logs and `_health`-style diagnostics, e.g. `jetstream`. */
  readonly kind: string;
  /** Stores `data` under `key`, replacing what was there. */
  put(key: string, data: BlobSource): Promise<BlobInfo>;
  /** The bytes under `key` as a stream, or null when there are none. */
  get(key: string): Promise<ReadableStream<Uint8Array> | null>;
  /** Size and checksum of `key` without reading it, or null when absent. */
  stat(key: string): Promise<BlobInfo | null>;
  /** Removes `key`; false when there was nothing to remove. Idempotent. */
  delete(key: string): Promise<boolean>;
  /** A presigned URL, when the driver can make one (absent: `presign_unsupported`). */
  presign?(key: string, expiresInSeconds: number): Promise<PresignedRef>;
  /**
   * Where a trusted peer reads or writes `key` directly (the streaming upload
   * and download protocol); absent when the driver has no such place.
   */
  locate?(key: string): BlobLocation;
}

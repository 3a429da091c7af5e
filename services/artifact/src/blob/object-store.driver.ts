import type { ObjectStore } from '@ars/bus';
import type { BlobDriver, BlobInfo, BlobLocation, BlobSource } from './blob-driver.ts';

const DIGEST_PREFIX = 'SHA-256=';

/** The object store's digest (`SHA-256=<base64url>`) as lowercase hex. */
export function digestToHex(digest: string): string {
  if (!digest.startsWith(DIGEST_PREFIX)) throw new Error(`unsupported object digest "${digest.slice(0, 16)}"`);
  return Buffer.from(digest.slice(DIGEST_PREFIX.length), 'base64url').toString('hex');
}

/** Options of {@link createObjectStoreDriver}. */
export interface ObjectStoreDriverOptions {
  /** The opened store (`openObjectStore(bus)`). */
  readonly store: ObjectStore;
  /** Its bucket name, reported by `locate`. */
  readonly bucket: string;
}

/**
 * The default blob driver: a JetStream object store. Bytes are chunked by the
 * store (128 KiB messages), so a put from a stream and a get never hold a
 * whole artifact. It cannot presign URLs; `locate` names the entry so a
 * trusted peer on the bus can stream bytes in and out itself.
 */
export function createObjectStoreDriver({ store, bucket }: ObjectStoreDriverOptions): BlobDriver {
  const stat = async (key: string): Promise<BlobInfo | null> => {
    const info = await store.info(key);
    if (info === null || info.deleted) return null;
    return { size_bytes: info.size, sha256: digestToHex(info.digest) };
  };
  return {
    kind: 'jetstream',
    async put(key: string, data: BlobSource): Promise<BlobInfo> {
      const info =
        data instanceof Uint8Array ? await store.putBlob({ name: key }, data) : await store.put({ name: key }, data);
      return { size_bytes: info.size, sha256: digestToHex(info.digest) };
    },
    async get(key: string): Promise<ReadableStream<Uint8Array> | null> {
      const result = await store.get(key);
      // A digest mismatch or a broken consumer errors the stream itself.
      return result === null ? null : result.data;
    },
    stat,
    async delete(key: string): Promise<boolean> {
      if ((await stat(key)) === null) return false;
      await store.delete(key);
      return true;
    },
    locate(key: string): BlobLocation {
      return { transport: 'nats_object_store', bucket, object_name: key };
    },
  };
}

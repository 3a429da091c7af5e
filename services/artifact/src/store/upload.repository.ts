import type { Collection, Store } from '@ars/store';
import type { Owner } from '../domain/artifact.ts';

/** A streaming upload between `_artifact.upload_begin` and the `artifacts.put` that finalises it. */
export interface UploadRecord {
  /** = upload_id. */
  _id: string;
  upload_id: string;
  /** The verified identity that began the upload; only it may finalise it. */
  tenant: string;
  user: string;
  session: string;
  /** Where the caller streams the bytes (and, once finalised, the artifact's blob key). */
  blob_key: string;
  /** The size the caller announced, when it did. */
  declared_bytes?: number;
  created_at: string;
  /** RFC 3339; an unfinished upload is swept after it. */
  expires_at: string;
}

/** Pending uploads. */
export interface UploadRepository {
  insert(record: UploadRecord): Promise<void>;
  findById(uploadId: string): Promise<UploadRecord | null>;
  /** False when another finaliser or the sweeper got there first. */
  delete(uploadId: string): Promise<boolean>;
  /** Uploads whose `expires_at` is before `now`, oldest first. */
  findExpired(now: string, limit: number): Promise<UploadRecord[]>;
  /** Pending uploads begun by exactly this (tenant, user, session). */
  findBySession(owner: Owner): Promise<UploadRecord[]>;
}

export const UPLOADS_COLLECTION = 'uploads';

/** The store-backed repository. */
export function createUploadRepository(store: Store): UploadRepository & { ensureIndexes(): Promise<void> } {
  const uploads: Collection<UploadRecord> = store.collection<UploadRecord>(UPLOADS_COLLECTION);
  return {
    async ensureIndexes() {
      await uploads.createIndex({ expires_at: 1 });
      await uploads.createIndex({ tenant: 1, user: 1, session: 1 });
    },
    async insert(record) {
      await uploads.insertOne(record);
    },
    findById: (uploadId) => uploads.findOne({ _id: uploadId }),
    async delete(uploadId) {
      return (await uploads.deleteOne({ _id: uploadId })).deletedCount > 0;
    },
    findExpired: (now, limit) => uploads.find({ expires_at: { $lt: now } }, { sort: { expires_at: 1 }, limit }),
    findBySession: (owner) => uploads.find({ tenant: owner.tenant, user: owner.user, session: owner.session }),
  };
}

import { isDuplicateKeyError } from '@ars/store';
import type { Store, StoreDocument } from '@ars/store';

/** The audit record of one token rotation; `_id` = the revoked token's fingerprint (64 hex). */
export interface TokenRotationRecord extends StoreDocument {
  rotation_id: string;
  tenant: string;
  user: string;
  session: string;
  revoked_token_id?: string;
  revoked_fingerprint: string;
  revoked_expires_at: string;
  issued_token_id: string;
  issued_fingerprint: string;
  issued_expires_at: string;
  rotated_at: string;
  revocation_keys: string[];
}

/** Token rotations, one per revoked token. */
export interface TokenRotationRepository {
  /** Inserts the record, or returns the one already stored for the same revoked token. */
  insertOnce(record: TokenRotationRecord): Promise<{ readonly record: TokenRotationRecord; readonly created: boolean }>;
}

/** The store-backed token rotation repository (collection `token_rotations`). */
export function createTokenRotationRepository(store: Store): TokenRotationRepository {
  const collection = store.collection<TokenRotationRecord>('token_rotations');
  return {
    async insertOnce(record) {
      try {
        await collection.insertOne(record);
        return { record, created: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        const existing = await collection.findOne({ _id: record._id });
        if (existing === null) throw error;
        return { record: existing, created: false };
      }
    },
  };
}

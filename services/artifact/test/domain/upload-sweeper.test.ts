import { describe, expect, it } from 'vitest';
import type { EventPublisher } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import type { BlobDriver } from '../../src/blob/blob-driver.ts';
import type { ArtifactDeps } from '../../src/handlers/deps.ts';
import { startUploadSweeper } from '../../src/internal/upload-sweeper.ts';
import type { ArtifactRepository } from '../../src/store/artifact.repository.ts';
import type { UploadRecord, UploadRepository } from '../../src/store/upload.repository.ts';

const NOW = new Date('2025-06-01T12:00:00.000Z');

function upload(id: string, expiresAt: string): UploadRecord {
  return {
    _id: id,
    upload_id: id,
    tenant: 't',
    user: 'u',
    session: 's',
    blob_key: `blobs/${id}`,
    created_at: '2025-06-01T00:00:00.000Z',
    expires_at: expiresAt,
  };
}

function fakes(records: UploadRecord[], adopted: Set<string>) {
  const uploads = new Map(records.map((r) => [r.upload_id, r]));
  const blobs = new Set(records.map((r) => r.blob_key));
  const uploadRepo: Pick<UploadRepository, 'findExpired' | 'delete'> = {
    findExpired: async (now) => [...uploads.values()].filter((r) => r.expires_at < now),
    delete: async (id) => uploads.delete(id),
  };
  const blobDriver: Pick<BlobDriver, 'delete'> = { delete: async (key) => blobs.delete(key) };
  const artifacts: Pick<ArtifactRepository, 'hasBlob'> = { hasBlob: async (key) => adopted.has(key) };
  const deps = {
    uploads: uploadRepo,
    blobs: blobDriver,
    artifacts,
    publisher: {} as EventPublisher,
    logger: createLogger({ name: 'sweeper-test', level: 'silent' }),
    now: () => NOW,
  } as unknown as ArtifactDeps;
  return { deps, uploads, blobs };
}

describe('upload sweeper', () => {
  it('discards expired uploads and their bytes, keeps live ones', async () => {
    const { deps, uploads, blobs } = fakes(
      [upload('old', '2025-06-01T11:00:00.000Z'), upload('live', '2025-06-01T13:00:00.000Z')],
      new Set(),
    );
    await startUploadSweeper(deps, { intervalMs: 60_000 })();
    expect([...uploads.keys()]).toEqual(['live']);
    expect([...blobs]).toEqual(['blobs/live']);
  });

  it('keeps the bytes of an expired upload an artifact already adopted', async () => {
    const { deps, uploads, blobs } = fakes([upload('done', '2025-06-01T11:00:00.000Z')], new Set(['blobs/done']));
    await startUploadSweeper(deps, { intervalMs: 60_000 })();
    expect(uploads.size).toBe(0);
    expect([...blobs]).toEqual(['blobs/done']);
  });
});

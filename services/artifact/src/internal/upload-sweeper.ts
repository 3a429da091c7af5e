import type { ArtifactDeps } from '../handlers/deps.ts';

/** Options of {@link startUploadSweeper}. */
export interface UploadSweeperOptions {
  /** Time between sweeps, in milliseconds. */
  readonly intervalMs: number;
  /** Uploads handled per sweep. @default 100 */
  readonly batch?: number;
}

/**
 * Discards uploads begun but never finalised once they expire: their bytes
 * (unless an artifact adopted them) and their record. Sweeps once at start,
 * then every `intervalMs`; the returned function stops it.
 */
export function startUploadSweeper(deps: ArtifactDeps, options: UploadSweeperOptions): () => Promise<void> {
  let running: Promise<void> | undefined;
  const sweep = async (): Promise<void> => {
    const expired = await deps.uploads.findExpired(deps.now().toISOString(), options.batch ?? 100);
    for (const upload of expired) {
      if (!(await deps.artifacts.hasBlob(upload.blob_key))) await deps.blobs.delete(upload.blob_key);
      await deps.uploads.delete(upload.upload_id);
    }
    if (expired.length > 0) deps.logger.info({ discarded: expired.length }, 'expired uploads discarded');
  };
  const tick = (): void => {
    running ??= sweep()
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'upload sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

import { decodeStoredEvent, encodeToken, eventFilterSubject, readEvents } from '@ars/bus';
import type { Bus } from '@ars/bus';
import { fileKey } from './multimodal-inputs.ts';
import type { RecalledMedia } from './multimodal-inputs.ts';
import type { RunIdentity } from './stored-events.ts';

/**
 * What a run's earlier claims published about its input images, read back
 * from the EVENTS stream (the durable record of a run's provider uploads:
 * the checkpoint is written only at step boundaries, the event right after
 * the upload). Two bounded reads of the session's subjects, one per type,
 * keeping the run's events. A read that fails is answered by the caller
 * with nothing recalled: at worst an image is uploaded once more.
 */

/** How long a read waits for its next message before it fails (a few events of one session and type). */
const RECALL_STALL_MS = 3_000;

async function payloadsOf(bus: Bus, run: RunIdentity, type: string): Promise<Record<string, unknown>[]> {
  const runToken = encodeToken(run.run);
  const reader = await readEvents(bus, {
    filterSubject: eventFilterSubject({ tenant: run.tenant, user: run.user, session: run.session, type }),
    stallMs: RECALL_STALL_MS,
  });
  const payloads: Record<string, unknown>[] = [];
  try {
    for await (const record of reader) {
      if (record.runToken === runToken) payloads.push(decodeStoredEvent(record.data).payload);
    }
  } finally {
    await reader.close();
  }
  return payloads;
}

/** The run's `llm.image.materialized` artifacts and `llm.provider_file.uploaded` file ids in the stream. */
export async function recallRunMedia(bus: Bus, run: RunIdentity): Promise<RecalledMedia> {
  const [materialized, uploaded] = await Promise.all([
    payloadsOf(bus, run, 'llm.image.materialized'),
    payloadsOf(bus, run, 'llm.provider_file.uploaded'),
  ]);
  const files = new Map<string, string>();
  for (const p of uploaded) {
    if (typeof p.Provider === 'string' && typeof p.ArtifactRef === 'string' && typeof p.FileID === 'string') {
      files.set(fileKey(p.Provider, p.ArtifactRef), p.FileID);
    }
  }
  return {
    materialized: new Set(materialized.flatMap((p) => (typeof p.ArtifactRef === 'string' ? [p.ArtifactRef] : []))),
    files,
  };
}

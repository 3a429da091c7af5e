import { openObjectStore } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import type { ArtifactHarness } from './harness.ts';

/** Where `_artifact.upload_begin` / `_artifact.download_begin` say the bytes go or come from. */
export interface Location {
  readonly transport: 'nats_object_store';
  readonly bucket: string;
  readonly object_name: string;
}

/** `bytes` as a stream of `chunkBytes` slices, so no copy of the whole is made. */
export function sliced(bytes: Uint8Array, chunkBytes = 1024 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + chunkBytes));
      offset += chunkBytes;
    },
  });
}

/** What the gateway does with a large body: begin, stream into the object store, finalise with artifacts.put. */
export async function uploadThroughBus(
  h: ArtifactHarness,
  identity: VerifiedIdentity,
  bytes: Uint8Array,
  metadata: Record<string, unknown> = {},
): Promise<{ upload_id: string; put: Promise<unknown> }> {
  const begun = (await h.call(identity, '_artifact.upload_begin', { size_bytes: bytes.length })) as {
    upload_id: string;
    location: Location;
  };
  await streamInto(h.service.bus, begun.location, sliced(bytes));
  const put = h.call(identity, 'artifacts.put', {
    identity: {},
    upload_id: begun.upload_id,
    mime_type: 'application/octet-stream',
    ...metadata,
  });
  return { upload_id: begun.upload_id, put };
}

/** Streams `data` into the object store entry `location` names. */
export async function streamInto(bus: Bus, location: Location, data: ReadableStream<Uint8Array>): Promise<void> {
  const objects = await openObjectStore(bus, location.bucket);
  await objects.put({ name: location.object_name }, data);
}

/** Reads the entry `location` names to its end. */
export async function readFrom(bus: Bus, location: Location): Promise<Buffer> {
  const objects = await openObjectStore(bus, location.bucket);
  const result = await objects.get(location.object_name);
  if (result === null) throw new Error(`no object ${location.object_name}`);
  const chunks: Uint8Array[] = [];
  for await (const chunk of result.data) chunks.push(chunk);
  const error = await result.error;
  if (error) throw error;
  return Buffer.concat(chunks);
}

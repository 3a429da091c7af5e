import type { BlobLocation, BlobTransfer } from '../../src/ports.ts';

/** The object store in memory: an entry exists only once its stream ended without error. */
export class MemoryBlobs implements BlobTransfer {
  readonly objects = new Map<string, Buffer>();
  /** Puts whose stream errored (nothing stored). */
  failedPuts = 0;
  /** Largest piece one put received (what the gateway held at once). */
  largestPiece = 0;

  async put(location: BlobLocation, data: ReadableStream<Uint8Array>): Promise<{ size: number }> {
    const pieces: Buffer[] = [];
    try {
      for await (const piece of data) {
        this.largestPiece = Math.max(this.largestPiece, piece.length);
        pieces.push(Buffer.from(piece));
      }
    } catch (error) {
      this.failedPuts += 1;
      throw error;
    }
    const bytes = Buffer.concat(pieces);
    this.objects.set(location.object_name, bytes);
    return { size: bytes.length };
  }

  async get(location: BlobLocation): Promise<ReadableStream<Uint8Array> | null> {
    const bytes = this.objects.get(location.object_name);
    if (bytes === undefined) return null;
    let offset = 0;
    return new ReadableStream({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(new Uint8Array(bytes.subarray(offset, offset + 1000)));
        offset += 1000;
      },
    });
  }
}

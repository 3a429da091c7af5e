/** Reads a stream to its end into one buffer; refuses past `maxBytes` (a bug guard, the caller checks sizes first). */
export async function readAll(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > maxBytes) {
      await stream.cancel().catch(() => undefined);
      throw new Error(`stream longer than the ${maxBytes} bytes expected`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

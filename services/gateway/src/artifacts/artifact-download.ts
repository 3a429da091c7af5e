import { Readable } from 'node:stream';
import { ARTIFACT_DOWNLOAD_BEGIN, parseInternalRequest, PROTOCOL_VERSION, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { BlobTransfer, RpcCaller } from '../ports.ts';
import { Base64Encoder, base64Length } from './base64.ts';

/** A JSON response whose text is produced as it is sent. */
export class StreamedJson {
  readonly body: Readable;
  /** Bytes of the whole text, known in advance. */
  readonly length: number;

  constructor(body: Readable, length: number) {
    this.body = body;
    this.length = length;
  }
}

async function* encode(prefix: string, bytes: ReadableStream<Uint8Array>, suffix: string, expected: number) {
  yield prefix;
  const encoder = new Base64Encoder();
  let seen = 0;
  for await (const chunk of bytes) {
    seen += chunk.length;
    if (seen > expected) throw new Error(`the stored bytes exceed the ${expected} bytes of the artifact`);
    const text = encoder.push(chunk);
    if (text !== '') yield text;
  }
  if (seen !== expected) throw new Error(`the stored bytes are ${seen}, the artifact says ${expected}`);
  yield encoder.end() + suffix;
}

/**
 * artifacts.get of an artifact too large for one bus reply: the read check
 * and the metadata from `_artifact.download_begin`, then the bytes straight
 * from the object store, base64-encoded piece by piece into the usual JSON
 * `{artifact, content_base64, protocol_version}`, with its length known in
 * advance. Bytes that turn out to differ from the metadata end the response
 * early (the client sees a truncated body, never wrong bytes).
 */
export async function streamArtifact(
  context: { readonly rpc: RpcCaller; readonly blobs: BlobTransfer },
  verified: VerifiedIdentity,
  body: { readonly identity: unknown; readonly artifact_id: unknown },
): Promise<StreamedJson> {
  // The artifacts.get body passed its own schema already; this reads it as the endpoint's.
  const request = parseInternalRequest(ARTIFACT_DOWNLOAD_BEGIN, {
    identity: body.identity,
    artifact_id: body.artifact_id,
  });
  const begun = await callInternal(context.rpc, ARTIFACT_DOWNLOAD_BEGIN, verified, request);
  const bytes = await context.blobs.get(begun.location);
  if (bytes === null) throw new ServiceError('not_found', `artifact ${begun.artifact.artifact_id} not found`);
  const prefix = `{"artifact":${JSON.stringify(begun.artifact)},"content_base64":"`;
  const suffix = `","protocol_version":${JSON.stringify(PROTOCOL_VERSION)}}`;
  const size = begun.artifact.size_bytes;
  const length = Buffer.byteLength(prefix) + base64Length(size) + Buffer.byteLength(suffix);
  return new StreamedJson(Readable.from(encode(prefix, bytes, suffix, size)), length);
}

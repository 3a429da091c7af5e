import { StringDecoder } from 'node:string_decoder';
import { ARTIFACT_UPLOAD_ABORT, ARTIFACT_UPLOAD_BEGIN, ServiceError } from '@ars/contracts';
import type { ArtifactUploadBeginReply, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { BlobTransfer, RpcCaller } from '../ports.ts';
import { Base64Decoder } from './base64.ts';
import { CONTENT_MEMBER, PutBodyScanner } from './put-body-scanner.ts';

/** What reading an artifacts.put body needs. */
export interface ArtifactUploadContext {
  readonly rpc: RpcCaller;
  /** Absent: bytes beyond `inlineBytes` are refused 413. */
  readonly blobs: BlobTransfer | undefined;
  /** Largest artifact forwarded inline (base64 in one bus message), in bytes. */
  readonly inlineBytes: number;
  /** Largest request body, in bytes. */
  readonly bodyLimitBytes: number;
  /** Most characters of members other than content_base64. */
  readonly restLimit: number;
  readonly logger: Logger;
}

/** One artifacts.put request as it arrives. */
export interface PutBodyInput {
  readonly raw: AsyncIterable<Buffer | string>;
  readonly verified: VerifiedIdentity;
  /**
   * Runs on the members read so far when the bytes turn out too large to go
   * inline, before anything is streamed: the identity gate, so that a call
   * refused anyway stores nothing.
   */
  readonly preflight: (partial: Record<string, unknown>) => void;
}

/** The body to forward, and the upload its bytes went to (to abort if the call is refused). */
export interface PutBody {
  readonly body: Record<string, unknown>;
  readonly uploadId?: string;
}

/** A streamed upload in progress: bytes go into the object store as they are decoded. */
class Upload {
  readonly begun: ArtifactUploadBeginReply;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stored: Promise<{ size: number }>;
  written = 0;
  over = false;

  constructor(begun: ArtifactUploadBeginReply, blobs: BlobTransfer) {
    this.begun = begun;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.#writer = writable.getWriter();
    this.#stored = blobs.put(begun.location, readable);
    this.#stored.catch(() => undefined);
  }

  /** Writes once the store took the previous bytes; past `max_bytes` stops storing (the entry is dropped). */
  async write(bytes: Uint8Array): Promise<void> {
    this.written += bytes.length;
    if (this.over) return;
    if (this.written > this.begun.max_bytes) {
      this.over = true;
      await this.cancel(new Error('the artifact is larger than the limit'));
      return;
    }
    await this.#writer.write(bytes);
  }

  async finish(): Promise<void> {
    await this.#writer.close();
    await this.#stored;
  }

  async cancel(reason: unknown): Promise<void> {
    await this.#writer.abort(reason).catch(() => undefined);
    await this.#stored.catch(() => undefined);
  }
}

function tooLarge(size: number, max: number): ServiceError {
  return new ServiceError(
    'payload_too_large',
    `the artifact is ${size} bytes; the largest accepted is ${max} bytes (ARTIFACT_MAX_BYTES)`,
  );
}

function parseRest(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServiceError('invalid_request', 'the request body is not valid JSON');
  }
  return value as Record<string, unknown>;
}

/**
 * Reads an artifacts.put body as it arrives. The `content_base64` value is
 * decoded in pieces; bytes that fit one bus message (`inlineBytes`) are
 * forwarded inline, re-encoded; past that, an upload is begun
 * (`_artifact.upload_begin`, the internal endpoint of `@ars/contracts`) and every decoded piece is written into the
 * object store as it comes, so at most one piece is held. Bytes beyond the
 * artifact limit the upload announced are not stored; the rest of the body is
 * still read (to name the size) and the call is refused 413. The body
 * forwarded then names the upload (`upload_id`) instead of the bytes.
 */
export async function readPutBody(context: ArtifactUploadContext, input: PutBodyInput): Promise<PutBody> {
  const scanner = new PutBodyScanner(context.restLimit);
  const decoder = new Base64Decoder();
  const text = new StringDecoder('utf8');
  let inline: Buffer[] = [];
  let decoded = 0;
  let received = 0;
  let upload: Upload | undefined;

  const begin = async (): Promise<Upload> => {
    const preview = scanner.preview();
    if (preview !== undefined) {
      let partial: unknown;
      try {
        partial = JSON.parse(preview);
      } catch {
        partial = undefined;
      }
      if (partial !== null && typeof partial === 'object') input.preflight(partial as Record<string, unknown>);
    }
    if (context.blobs === undefined) {
      throw new ServiceError(
        'payload_too_large',
        `artifacts over ${context.inlineBytes} bytes need the streamed upload, which this gateway has no object store for`,
      );
    }
    const begun = await callInternal(context.rpc, ARTIFACT_UPLOAD_BEGIN, input.verified, {});
    return new Upload(begun, context.blobs);
  };

  const take = async (bytes: Buffer): Promise<void> => {
    if (bytes.length === 0) return;
    decoded += bytes.length;
    if (upload === undefined && decoded <= context.inlineBytes) {
      inline.push(bytes);
      return;
    }
    if (upload === undefined) {
      upload = await begin();
      const held = inline;
      inline = [];
      for (const piece of held) await upload.write(piece);
    }
    await upload.write(bytes);
  };

  const feed = async (chunk: string): Promise<void> => {
    for (const piece of scanner.push(chunk)) await take(decoder.push(piece));
  };

  try {
    for await (const chunk of input.raw) {
      received += chunk.length;
      if (received > context.bodyLimitBytes) {
        throw new ServiceError('payload_too_large', 'the request body is larger than the gateway accepts');
      }
      await feed(typeof chunk === 'string' ? chunk : text.write(chunk));
    }
    await feed(text.end());
    const rest = parseRest(scanner.end());
    if (!scanner.contentSeen) return { body: rest };
    decoder.end();
    if (Object.hasOwn(rest, 'upload_id')) {
      throw new ServiceError('invalid_request', 'artifacts.put takes exactly one of content_base64 and upload_id');
    }
    const current = upload as Upload | undefined;
    if (current === undefined) {
      return { body: { ...rest, [CONTENT_MEMBER]: Buffer.concat(inline).toString('base64') } };
    }
    if (current.over) throw tooLarge(current.written, current.begun.max_bytes);
    await current.finish();
    const { [CONTENT_MEMBER]: _content, ...members } = rest;
    return { body: { ...members, upload_id: current.begun.upload_id }, uploadId: current.begun.upload_id };
  } catch (error) {
    const current = upload as Upload | undefined;
    if (current !== undefined) {
      await current.cancel(error);
      await abortUpload(context, input.verified, current.begun.upload_id);
    }
    throw error;
  }
}

/**
 * Drops an upload the call will not finalise (`_artifact.upload_abort`).
 * Best effort: one left behind is swept by the artifact service after its TTL.
 */
export async function abortUpload(
  context: Pick<ArtifactUploadContext, 'rpc' | 'logger'>,
  verified: VerifiedIdentity,
  uploadId: string,
): Promise<void> {
  try {
    await callInternal(context.rpc, ARTIFACT_UPLOAD_ABORT, verified, { upload_id: uploadId });
  } catch (error) {
    context.logger.warn({ err: error, uploadId }, 'upload could not be aborted; the artifact service sweeps it');
  }
}

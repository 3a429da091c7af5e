import { artifactUri } from '@ars/contracts';
import type { IdentityQuad, OffloadedPart } from '@ars/contracts';
import type { EventPublisher } from '@ars/bus';
import type { ArtifactUploader } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';

/**
 * Large MCP results go to artifacts, not into a reply: a tool result (or a
 * resource read) larger than the threshold, in bytes of JSON, has its
 * largest parts (content blocks, the structured content, resource contents)
 * stored as artifacts of the caller's session, largest first, until what is
 * left is no larger than the threshold; each stored part is replaced by a
 * `resource_link` to `artifact://<artifact_id>` and announced with
 * `mcp.resource_offloaded`. A result larger than the hard cap is refused
 * before anything is stored. Parts that are not content (a `resource_link`,
 * an unknown block type) stay.
 */

/** The artifact namespace offloaded MCP results are stored in. */
export const OFFLOAD_NAMESPACE = 'mcp_offload';

/** Bounds of offloading, in bytes of JSON. */
export interface OffloadSettings {
  /** Larger results are offloaded (MCP_OFFLOAD_THRESHOLD_BYTES). */
  readonly thresholdBytes: number;
  /** Larger results are refused (MCP_OFFLOAD_MAX_BYTES). */
  readonly maxBytes: number;
}

/** Whose result it is and where it comes from. */
export interface OffloadOrigin {
  /** The artifact's owner and the event's identity (run '' outside a run). */
  readonly identity: IdentityQuad;
  readonly serverId: string;
  /** The tool name, or the resource uri of a read. */
  readonly label: string;
}

/** Why a result could not be handled. */
export class OffloadRefusal extends Error {
  readonly kind: 'too_large' | 'store_failed';
  constructor(kind: 'too_large' | 'store_failed', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OffloadRefusal';
    this.kind = kind;
  }
}

/** A part that may be stored: where it is, its JSON size, and its content. */
interface Candidate {
  readonly at: number | 'structured';
  readonly size: number;
  readonly mimeType: string;
  /** The resource uri of an embedded resource or a read's content. */
  readonly uri?: string | undefined;
  bytes(): Buffer;
}

type Json = Record<string, unknown>;

const MIME = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/;
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const mimeOr = (value: unknown, fallback: string): string => {
  const mime = str(value);
  return mime !== undefined && mime.length <= 255 && MIME.test(mime) ? mime : fallback;
};

/** The storable content of a resource's contents item (`{uri, mimeType, text | blob}`). */
function resourceCandidate(at: number, item: Json, size: number): Candidate | null {
  const uri = str(item.uri);
  const text = str(item.text);
  if (text !== undefined) {
    return { at, size, uri, mimeType: mimeOr(item.mimeType, 'text/plain'), bytes: () => Buffer.from(text, 'utf8') };
  }
  const blob = str(item.blob);
  if (blob !== undefined) {
    const mimeType = mimeOr(item.mimeType, 'application/octet-stream');
    return { at, size, uri, mimeType, bytes: () => Buffer.from(blob, 'base64') };
  }
  return null;
}

/** The storable content of a content block, or null for one that is not content. */
function blockCandidate(at: number, block: Json): Candidate | null {
  const size = jsonBytes(block);
  switch (block.type) {
    case 'text': {
      const text = str(block.text);
      return text === undefined ? null : { at, size, mimeType: 'text/plain', bytes: () => Buffer.from(text, 'utf8') };
    }
    case 'image':
    case 'audio': {
      const data = str(block.data);
      if (data === undefined) return null;
      return {
        at,
        size,
        mimeType: mimeOr(block.mimeType, 'application/octet-stream'),
        bytes: () => Buffer.from(data, 'base64'),
      };
    }
    case 'resource':
      return typeof block.resource === 'object' && block.resource !== null
        ? resourceCandidate(at, block.resource as Json, size)
        : null;
    default:
      return null;
  }
}

/** The `resource_link` block that stands for a stored part. */
export function linkBlock(part: OffloadedPart, what: string): Json {
  return {
    type: 'resource_link',
    uri: artifactUri(part.artifact_id),
    name: part.artifact_id,
    mimeType: part.mime_type,
    size: part.size_bytes,
    description: `${what} (${part.size_bytes} bytes) stored as artifact ${part.artifact_id}: read it with artifact_read`,
  };
}

/** The candidates to store, largest first, until what stays is within the threshold. */
function choose(candidates: readonly Candidate[], total: number, threshold: number): Candidate[] {
  const chosen: Candidate[] = [];
  let left = total;
  for (const candidate of [...candidates].sort((a, b) => b.size - a.size)) {
    if (left <= threshold) break;
    chosen.push(candidate);
    left -= candidate.size;
  }
  return chosen;
}

export interface Offloader {
  /**
   * A CallToolResult as forwarded: unchanged within the threshold, else with
   * its largest parts stored. Throws {@link OffloadRefusal}.
   */
  toolResult(result: Json, origin: OffloadOrigin): Promise<{ result: Json; offloaded: OffloadedPart[] }>;
  /** A resource read's `contents` likewise (each stored item keeps its uri and mime, and names its artifact). */
  resourceContents(
    contents: readonly Json[],
    origin: OffloadOrigin,
  ): Promise<{ contents: Json[]; offloaded: OffloadedPart[] }>;
}

/** What the offloader uses. */
export interface OffloaderDeps {
  readonly settings: OffloadSettings;
  /** Stores the parts as artifacts of the caller's session. */
  readonly writer: ArtifactUploader;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
}

export function createOffloader(deps: OffloaderDeps): Offloader {
  const { settings, writer, publisher, logger } = deps;

  function refuseTooLarge(total: number, origin: OffloadOrigin): void {
    if (total <= settings.maxBytes) return;
    throw new OffloadRefusal(
      'too_large',
      `${origin.serverId}/${origin.label}: result of ${total} bytes (at most ${settings.maxBytes} are offloaded)`,
    );
  }

  function announce(origin: OffloadOrigin, part: OffloadedPart, uri: string | undefined): void {
    const at = new Date().toISOString();
    const source = uri === undefined ? origin.serverId : `${origin.serverId} ${uri}`;
    publisher
      .publish({
        type: 'mcp.resource_offloaded',
        identity: origin.identity,
        occurredAt: at,
        payload: {
          Identity: origin.identity,
          ArtifactID: part.artifact_id,
          Source: source,
          SizeBytes: part.size_bytes,
          OccurredAt: at,
        },
      })
      .catch((error: unknown) =>
        logger.warn({ err: error, artifact_id: part.artifact_id }, 'mcp.resource_offloaded not published'),
      );
  }

  /** Stores the chosen candidates (all or none is reported: a failure throws). */
  async function store(chosen: readonly Candidate[], origin: OffloadOrigin): Promise<Map<Candidate, OffloadedPart>> {
    const { tenant, user, session } = origin.identity;
    const stored = new Map<Candidate, OffloadedPart>();
    try {
      for (const candidate of chosen) {
        const at = candidate.at === 'structured' ? 'structured_content' : `content-${candidate.at}`;
        const artifact = await writer.upload(
          { tenant, user, session },
          {
            bytes: candidate.bytes(),
            mimeType: candidate.mimeType,
            name: `${origin.label}.${at}`.slice(0, 255),
            source: `mcp:${origin.serverId}`.slice(0, 256),
            namespace: OFFLOAD_NAMESPACE,
          },
        );
        stored.set(candidate, {
          artifact_id: artifact.artifact_id,
          size_bytes: artifact.size_bytes,
          mime_type: artifact.mime_type,
        });
      }
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new OffloadRefusal('store_failed', `${origin.serverId}/${origin.label}: offload failed: ${detail}`, {
        cause: error,
      });
    }
    for (const [candidate, part] of stored) announce(origin, part, candidate.uri);
    return stored;
  }

  return {
    async toolResult(result, origin) {
      const total = jsonBytes(result);
      if (total <= settings.thresholdBytes) return { result, offloaded: [] };
      refuseTooLarge(total, origin);
      const blocks = (Array.isArray(result.content) ? result.content : []) as Json[];
      const candidates = blocks.map((block, at) => blockCandidate(at, block)).filter((c) => c !== null);
      const structured = result.structuredContent;
      if (structured !== undefined && structured !== null) {
        const json = JSON.stringify(structured);
        candidates.push({
          at: 'structured',
          size: jsonBytes(structured),
          mimeType: 'application/json',
          bytes: () => Buffer.from(json),
        });
      }
      const stored = await store(choose(candidates, total, settings.thresholdBytes), origin);
      const byPlace = new Map([...stored].map(([c, part]) => [c.at, part]));
      const content = blocks.map((block, at) => {
        const part = byPlace.get(at);
        return part === undefined ? block : linkBlock(part, `content block ${at} (${String(block.type)})`);
      });
      const next: Json = { ...result, content };
      const structuredPart = byPlace.get('structured');
      if (structuredPart !== undefined) {
        delete next.structuredContent;
        content.push(linkBlock(structuredPart, 'the structured content'));
      }
      return { result: next, offloaded: [...stored.values()] };
    },

    async resourceContents(contents, origin) {
      const total = jsonBytes(contents);
      if (total <= settings.thresholdBytes) return { contents: [...contents], offloaded: [] };
      refuseTooLarge(total, origin);
      const candidates = contents
        .map((item, at) => resourceCandidate(at, item, jsonBytes(item)))
        .filter((c) => c !== null);
      const stored = await store(choose(candidates, total, settings.thresholdBytes), origin);
      const byPlace = new Map([...stored].map(([c, part]) => [c.at, part]));
      const next = contents.map((item, at) => {
        const part = byPlace.get(at);
        if (part === undefined) return item;
        const { text: _text, blob: _blob, ...rest } = item;
        return {
          ...rest,
          artifact_id: part.artifact_id,
          size_bytes: part.size_bytes,
          resource_link: linkBlock(part, `resource ${String(item.uri)}`),
        };
      });
      return { contents: next, offloaded: [...stored.values()] };
    },
  };
}

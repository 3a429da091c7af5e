import { createHash } from 'node:crypto';
import { ARTIFACT_URI_PREFIX, isServiceError } from '@ars/contracts';
import { isTextual } from './artifact-io.ts';
import type { ArtifactIo } from './artifact-io.ts';
import { ToolError } from './tool.ts';
import type { ToolOwner } from './tool.ts';

/**
 * Artifacts passed to an MCP server as tool arguments. A string argument
 * that is exactly `artifact://<artifact_id>` (the scheme of the tool host's
 * offload `resource_link`s; the id has no whitespace and at most 256
 * characters), at any depth of the arguments' objects and arrays (values,
 * not keys), is replaced before the call by the artifact's content: its
 * UTF-8 text when its MIME type is textual (`isTextual`) and its bytes
 * decode as UTF-8, else its bytes in base64. A string that merely contains
 * such a URI is left as it is; a bare `artifact://` or an over-long id is
 * refused. Each artifact is read once per attempt, as the run's owner (the
 * artifact service's read rule: an artifact the owner may not read is
 * `not_found`), within {@link ARTIFACT_EGRESS_LIMITS}. Every refusal is a
 * {@link ToolError}: the model is told, the run goes on.
 */

/** Bounds of the artifacts sent with one MCP tool call. */
export const ARTIFACT_EGRESS_LIMITS = {
  /** Distinct artifacts referenced by one call's arguments. */
  maxArtifacts: 16,
  /** Bytes of all the call's artifacts together, before encoding (256 KiB). */
  maxBytes: 256 * 1024,
  /**
   * Bytes of the resolved arguments as JSON (768 KiB): the `_mcp.call_tool`
   * request is one bus message (1 MiB by default), and base64 or JSON escapes
   * make the content larger than the artifact.
   */
  maxJsonBytes: 768 * 1024,
} as const;
export type ArtifactEgressLimits = { readonly [K in keyof typeof ARTIFACT_EGRESS_LIMITS]: number };

/** How an artifact's content was put into the arguments. */
export type EgressEncoding = 'text' | 'base64';

/** One artifact sent to an MCP server: a record of `mcp.artifact_egressed` `Records`. */
export interface EgressRecord {
  readonly ArtifactID: string;
  /** The artifact's file name; `""` when it has none. */
  readonly Name: string;
  readonly MimeType: string;
  readonly SizeBytes: number;
  /** `sha256:<lowercase hex>` of the bytes sent. */
  readonly SHA256: string;
  readonly PassedAs: EgressEncoding;
  /** Where it was placed: JSON Pointers (RFC 6901) into the arguments, one per reference. */
  readonly Paths: readonly string[];
}

/** A reference found in the arguments. */
export interface ArtifactRef {
  readonly artifactId: string;
  /** JSON Pointer of the string that named it. */
  readonly path: string;
}

/** Most characters of an artifact id (the contracts' `Id`). */
const MAX_ID_CHARS = 256;

const pointerToken = (key: string | number): string => String(key).replaceAll('~', '~0').replaceAll('/', '~1');

/** The artifact id a string names, undefined when it is not a reference; throws on a malformed one. */
function referenced(value: string, path: string): string | undefined {
  if (!value.startsWith(ARTIFACT_URI_PREFIX)) return undefined;
  const id = value.slice(ARTIFACT_URI_PREFIX.length);
  // Prose that starts with the scheme is text, not a reference.
  if (/\s/.test(id)) return undefined;
  if (id.length === 0 || id.length > MAX_ID_CHARS) {
    throw new ToolError(
      'permanent',
      `argument ${path || '/'} is not a valid artifact reference (artifact://<artifact_id>)`,
    );
  }
  return id;
}

/** Every `artifact://<id>` string in `args`, in document order; throws ToolError on a malformed reference. */
export function findArtifactRefs(args: unknown): ArtifactRef[] {
  const refs: ArtifactRef[] = [];
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      const artifactId = referenced(value, path);
      if (artifactId !== undefined) refs.push({ artifactId, path });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, `${path}/${index}`));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) visit(item, `${path}/${pointerToken(key)}`);
    }
  };
  visit(args, '');
  return refs;
}

/** `args` with every reference replaced by its artifact's content (`contents` by artifact id). */
function substitute(value: unknown, contents: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') {
    const id = value.startsWith(ARTIFACT_URI_PREFIX) ? value.slice(ARTIFACT_URI_PREFIX.length) : undefined;
    return id === undefined ? value : (contents.get(id) ?? value);
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, contents));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, contents)]));
  }
  return value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function encode(bytes: Uint8Array, mimeType: string): { content: string; encoding: EgressEncoding } {
  if (isTextual(mimeType)) {
    try {
      return { content: utf8.decode(bytes), encoding: 'text' };
    } catch {
      // Not UTF-8 after all: sent like any binary.
    }
  }
  return { content: Buffer.from(bytes).toString('base64'), encoding: 'base64' };
}

/** A failed read as the call's refusal: the owner may not read it (or it is gone), or the service is unreachable. */
function readRefusal(error: unknown, artifactId: string, serverId: string): ToolError {
  if (isServiceError(error) && (error.code === 'not_found' || error.code === 'forbidden')) {
    return new ToolError(
      'permanent',
      `artifact ${artifactId} cannot be passed to MCP server ${serverId}: it does not exist or the run's owner may not read it`,
      { cause: error },
    );
  }
  if (error instanceof ToolError) return error;
  const transient = isServiceError(error) && (error.retryable || error.code === 'timeout');
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError(transient ? 'transient' : 'permanent', `artifact ${artifactId} could not be read: ${message}`, {
    cause: error,
  });
}

/** What {@link resolveArtifactArgs} returns: the arguments to send, and a record per artifact (none: nothing to send). */
export interface ResolvedArgs {
  readonly args: Record<string, unknown>;
  readonly records: readonly EgressRecord[];
}

/**
 * Replaces the artifact references of `args` by the artifacts' contents,
 * read as `owner` (see the module comment); `args` itself is not changed.
 * Throws ToolError: `permanent` for a malformed reference, artifacts the
 * egress policy refuses, an artifact the owner may not read, or a bound
 * exceeded; `transient` when the artifact
 * service did not answer.
 */
export async function resolveArtifactArgs(
  args: Record<string, unknown>,
  context: {
    readonly owner: ToolOwner;
    readonly artifacts: ArtifactIo;
    readonly serverId: string;
    /** Why the egress policy refuses artifacts to this server and tool; undefined: it allows them. */
    readonly refusal?: string | undefined;
  },
  limits: ArtifactEgressLimits = ARTIFACT_EGRESS_LIMITS,
): Promise<ResolvedArgs> {
  const refs = findArtifactRefs(args);
  if (refs.length === 0) return { args, records: [] };
  if (context.refusal !== undefined) {
    throw new ToolError(
      'permanent',
      `artifacts may not be passed to MCP server ${context.serverId}: ${context.refusal}`,
    );
  }
  const paths = new Map<string, string[]>();
  for (const { artifactId, path } of refs) paths.set(artifactId, [...(paths.get(artifactId) ?? []), path]);
  if (paths.size > limits.maxArtifacts) {
    throw new ToolError(
      'permanent',
      `the arguments name ${paths.size} artifacts; at most ${limits.maxArtifacts} go with one MCP tool call`,
    );
  }
  const contents = new Map<string, string>();
  const records: EgressRecord[] = [];
  let used = 0;
  for (const [artifactId, at] of paths) {
    const room = limits.maxBytes - used;
    const read = await context.artifacts
      .read(context.owner, artifactId, room)
      .catch((error: unknown) => Promise.reject(readRefusal(error, artifactId, context.serverId)));
    if (read.truncated) {
      throw new ToolError(
        'permanent',
        `artifact ${artifactId} is ${read.artifact.size_bytes} bytes: the artifacts of one MCP tool call may total at most ${limits.maxBytes} bytes (${room} left)`,
      );
    }
    used += read.bytes.length;
    const { content, encoding } = encode(read.bytes, read.artifact.mime_type);
    contents.set(artifactId, content);
    records.push({
      ArtifactID: artifactId,
      Name: read.artifact.name ?? '',
      MimeType: read.artifact.mime_type,
      SizeBytes: read.bytes.length,
      SHA256: `sha256:${createHash('sha256').update(read.bytes).digest('hex')}`,
      PassedAs: encoding,
      Paths: at,
    });
  }
  const resolved = substitute(args, contents) as Record<string, unknown>;
  const jsonBytes = Buffer.byteLength(JSON.stringify(resolved));
  if (jsonBytes > limits.maxJsonBytes) {
    throw new ToolError(
      'permanent',
      `the arguments with their artifacts are ${jsonBytes} bytes of JSON; one MCP tool call carries at most ${limits.maxJsonBytes}`,
    );
  }
  return { args: resolved, records };
}

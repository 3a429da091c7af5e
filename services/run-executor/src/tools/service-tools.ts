import {
  artifactReadArgs,
  artifactWriteArgs,
  BUILTIN_TOOL_BOUNDS,
  isServiceError,
  MEMORY_CALLER_READ,
  MEMORY_CALLER_WRITE,
} from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import { isTextual } from './artifact-io.ts';
import type { ArtifactIo } from './artifact-io.ts';
import { declaredBuiltin } from './builtins.ts';
import { ToolError } from './tool.ts';
import type { ToolDefinition, ToolOwner } from './tool.ts';

/**
 * Built-in tools over the other services, acting as the run's owner (no
 * scopes): caller memory (`_memory.caller_read` / `_memory.caller_write`)
 * and artifacts (the streaming transfer protocol, see `artifact-io.ts`).
 *
 * Side-effect classes: `memory_read` and `artifact_read` are read-only;
 * `memory_write` is idempotent (writing the same value to the same key
 * again leaves the same memory); `artifact_write` is unsafe: every
 * `artifacts.put` mints a new artifact id, so a repeated call would store a
 * second artifact — it is never retried and never repeated after a crash
 * (an interrupted call fails the run `tool_outcome_unknown`).
 */

/** Names of the service tools (the engine refreshes the prompt's memory after a `memory_write`). */
export const SERVICE_TOOL_NAMES = {
  memoryRead: 'memory_read',
  memoryWrite: 'memory_write',
  artifactRead: 'artifact_read',
  artifactWrite: 'artifact_write',
} as const;

/** Options of {@link createServiceTools}. */
export interface ServiceToolOptions {
  readonly rpc: RpcClient;
  readonly artifacts: ArtifactIo;
  /** Per RPC, in ms. */
  readonly timeoutMs: number;
  /** Most bytes `artifact_read` returns (its `max_bytes` is capped to it). */
  readonly readMaxBytes: number;
  /** Largest artifact `artifact_write` stores, in bytes. */
  readonly writeMaxBytes: number;
}

const DEFAULT_READ_BYTES = BUILTIN_TOOL_BOUNDS.artifactReadDefaultBytes;

function identityOf(owner: ToolOwner): VerifiedIdentity {
  return { tenant: owner.tenant, user: owner.user, session: owner.session, scopes: [] };
}

/** A service's refusal as a tool failure: unreachable or slow is transient (retried per policy), anything else permanent. */
function toToolError(error: unknown): ToolError {
  if (isServiceError(error)) {
    const transient = error.code === 'unavailable' || error.code === 'timeout';
    return new ToolError(transient ? 'transient' : 'permanent', `${error.code}: ${error.message}`, { cause: error });
  }
  if (error instanceof ToolError) return error;
  return new ToolError('permanent', error instanceof Error ? error.message : String(error), { cause: error });
}

async function calling<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toToolError(error);
  }
}

export function createServiceTools(options: ServiceToolOptions): ToolDefinition[] {
  const { rpc, artifacts, timeoutMs } = options;

  const memoryRead: ToolDefinition = {
    ...declaredBuiltin(SERVICE_TOOL_NAMES.memoryRead),
    retry: { maxAttempts: 2, backoffMs: 50 },
    async run(args, context) {
      const answer = await calling(() =>
        callInternal(
          rpc,
          MEMORY_CALLER_READ,
          identityOf(context.owner),
          { ...context.owner, key: args.key as string },
          { timeoutMs },
        ),
      );
      const item = answer.item;
      return JSON.stringify(
        item === null ? null : { key: item.key, tier: item.tier, value: item.value, version: item.version },
      );
    },
  };

  const memoryWrite: ToolDefinition = {
    ...declaredBuiltin(SERVICE_TOOL_NAMES.memoryWrite),
    retry: { maxAttempts: 3, backoffMs: 50 },
    async run(args, context) {
      const answer = await calling(() =>
        callInternal(
          rpc,
          MEMORY_CALLER_WRITE,
          identityOf(context.owner),
          { ...context.owner, key: args.key as string, value: args.value },
          { timeoutMs },
        ),
      );
      return JSON.stringify({ key: answer.item.key, version: answer.item.version, written: true });
    },
  };

  const artifactRead: ToolDefinition = {
    ...declaredBuiltin(SERVICE_TOOL_NAMES.artifactRead, artifactReadArgs(options.readMaxBytes)),
    retry: { maxAttempts: 2, backoffMs: 50 },
    async run(args, context) {
      const maxBytes = (args.max_bytes as number | undefined) ?? Math.min(DEFAULT_READ_BYTES, options.readMaxBytes);
      const read = await calling(() => artifacts.read(context.owner, args.artifact_id as string, maxBytes));
      const text = isTextual(read.artifact.mime_type);
      return JSON.stringify({
        artifact_id: read.artifact.artifact_id,
        mime_type: read.artifact.mime_type,
        size_bytes: read.artifact.size_bytes,
        ...(read.artifact.name === undefined ? {} : { name: read.artifact.name }),
        encoding: text ? 'utf8' : 'base64',
        truncated: read.truncated,
        content: Buffer.from(read.bytes).toString(text ? 'utf8' : 'base64'),
      });
    },
  };

  const artifactWrite: ToolDefinition = {
    ...declaredBuiltin(SERVICE_TOOL_NAMES.artifactWrite, artifactWriteArgs(options.writeMaxBytes)),
    retry: { maxAttempts: 1, backoffMs: 0 },
    async run(args, context) {
      const bytes = Buffer.from(args.content as string, args.encoding as 'utf8' | 'base64');
      if (bytes.length > options.writeMaxBytes) {
        throw new ToolError(
          'permanent',
          `content is ${bytes.length} bytes; artifact_write stores at most ${options.writeMaxBytes}`,
        );
      }
      const stored = await calling(() =>
        artifacts.write(context.owner, {
          bytes,
          mimeType: args.mime_type as string,
          name: args.name as string | undefined,
          namespace: args.namespace as string,
          source: `tool:${SERVICE_TOOL_NAMES.artifactWrite}`,
        }),
      );
      return JSON.stringify({
        artifact_id: stored.artifact_id,
        mime_type: stored.mime_type,
        size_bytes: stored.size_bytes,
        checksum: stored.checksum,
        ...(stored.name === undefined ? {} : { name: stored.name }),
      });
    },
  };

  return [memoryRead, memoryWrite, artifactRead, artifactWrite];
}

import type { InputArtifactRecord } from '../domain/task.ts';
import { isTextual } from '../tools/artifact-io.ts';
import type { ArtifactIo } from '../tools/artifact-io.ts';
import type { ToolOwner } from '../tools/tool.ts';
import { SERVICE_TOOL_NAMES } from '../tools/service-tools.ts';

/**
 * How each input artifact reaches the planner. The disposition is taken from
 * the first layer that names one: the start's hint (`start_hint`), the
 * agent's `multimodal.default_disposition` (`agent_multimodal`), the runtime
 * default `ref` (`runtime_default`). What the runtime can honour:
 *
 * - `ref`: the prompt names the artifact (id, type, size); the planner reads
 *   it with `artifact_read` when it needs to;
 * - `inline`: the content is put into the prompt — text types only, at most
 *   the inline limit; else degraded to `ref` (`not_text`, `too_large`, or
 *   `read_failed` when the bytes could not be fetched);
 * - `provider_native`: no provider path uploads files yet: degraded to `ref`
 *   (`provider_native_unsupported`);
 * - `tool:<name>`: the prompt asks the planner to use that tool on it, when
 *   the run exposes the tool; else degraded to `ref` (`tool_not_exposed`).
 */

/** `task.input_disposition.resolved` `layer` values. */
export const DISPOSITION_LAYERS = {
  startHint: 'start_hint',
  agent: 'agent_multimodal',
  runtime: 'runtime_default',
} as const;

/** The runtime default disposition. */
export const RUNTIME_DEFAULT_DISPOSITION = 'ref';

const DISPOSITION = /^(ref|inline|provider_native|tool:\S+)$/;

/** One artifact's resolved disposition (the event's members, without identity and time). */
export interface ResolvedDisposition {
  readonly artifact_id: string;
  readonly mime: string;
  readonly size_bytes?: number | undefined;
  readonly disposition: string;
  readonly layer: string;
  readonly degraded: boolean;
  readonly degraded_from?: string;
  readonly degradation_reason?: string;
  readonly tool?: string;
}

/** What resolution needs besides the artifact. */
export interface DispositionContext {
  readonly agentDefault?: string | undefined;
  readonly exposedTools: ReadonlySet<string>;
  readonly inlineMaxBytes: number;
}

const UNKNOWN_MIME = 'application/octet-stream';

function requested(artifact: InputArtifactRecord, agentDefault: string | undefined): { value: string; layer: string } {
  if (artifact.disposition !== undefined) return { value: artifact.disposition, layer: DISPOSITION_LAYERS.startHint };
  if (agentDefault !== undefined && DISPOSITION.test(agentDefault)) {
    return { value: agentDefault, layer: DISPOSITION_LAYERS.agent };
  }
  return { value: RUNTIME_DEFAULT_DISPOSITION, layer: DISPOSITION_LAYERS.runtime };
}

/** Resolves one artifact's disposition (pure). */
export function resolveDisposition(artifact: InputArtifactRecord, context: DispositionContext): ResolvedDisposition {
  const mime = artifact.mime_type ?? UNKNOWN_MIME;
  const { value, layer } = requested(artifact, context.agentDefault);
  const base = { artifact_id: artifact.artifact_id, mime, size_bytes: artifact.size_bytes, layer };
  const degrade = (reason: string): ResolvedDisposition => ({
    ...base,
    disposition: RUNTIME_DEFAULT_DISPOSITION,
    degraded: true,
    degraded_from: value,
    degradation_reason: reason,
  });
  if (value === 'inline') {
    if (!isTextual(mime)) return degrade('not_text');
    if ((artifact.size_bytes ?? Number.POSITIVE_INFINITY) > context.inlineMaxBytes) return degrade('too_large');
    return { ...base, disposition: value, degraded: false };
  }
  if (value === 'provider_native') return degrade('provider_native_unsupported');
  if (value.startsWith('tool:')) {
    const tool = value.slice('tool:'.length);
    if (!context.exposedTools.has(tool)) return degrade('tool_not_exposed');
    return { ...base, disposition: value, degraded: false, tool };
  }
  return { ...base, disposition: RUNTIME_DEFAULT_DISPOSITION, degraded: false };
}

/** The prompt line of one artifact (and its content when inline). */
function promptEntry(d: ResolvedDisposition, content: string | undefined): string {
  const head = `- ${d.artifact_id} (${d.mime}${d.size_bytes === undefined ? '' : `, ${d.size_bytes} bytes`})`;
  if (d.disposition === 'inline' && content !== undefined) return `${head}, inline:\n${content}`;
  if (d.tool !== undefined) return `${head}: use the ${d.tool} tool on it.`;
  return `${head}: by reference; read it with the ${SERVICE_TOOL_NAMES.artifactRead} tool when needed.`;
}

/** The input artifacts of a run: their resolved dispositions and the prompt section. */
export interface InputArtifactsPlan {
  readonly resolved: readonly ResolvedDisposition[];
  /** `''` when the run has no input artifacts. */
  readonly prompt: string;
}

/**
 * Resolves every input artifact and fetches the content of the inline ones
 * (in parallel); an inline artifact whose bytes cannot be read degrades to
 * `ref` (`read_failed`).
 */
export async function planInputArtifacts(
  artifacts: readonly InputArtifactRecord[],
  context: DispositionContext,
  io: ArtifactIo,
  owner: ToolOwner,
): Promise<InputArtifactsPlan> {
  if (artifacts.length === 0) return { resolved: [], prompt: '' };
  const entries = await Promise.all(
    artifacts.map(async (artifact): Promise<[ResolvedDisposition, string | undefined]> => {
      const d = resolveDisposition(artifact, context);
      if (d.disposition !== 'inline') return [d, undefined];
      try {
        const read = await io.read(owner, d.artifact_id, context.inlineMaxBytes);
        return [d, Buffer.from(read.bytes).toString('utf8')];
      } catch {
        // Whatever failed, the run goes on with a reference: the degradation is reported in its disposition event.
        const { disposition, layer, artifact_id, mime, size_bytes } = d;
        return [
          {
            artifact_id,
            mime,
            size_bytes,
            layer,
            disposition: RUNTIME_DEFAULT_DISPOSITION,
            degraded: true,
            degraded_from: disposition,
            degradation_reason: 'read_failed',
          },
          undefined,
        ];
      }
    }),
  );
  const prompt = `Input artifacts:\n${entries.map(([d, content]) => promptEntry(d, content)).join('\n')}`;
  return { resolved: entries.map(([d]) => d), prompt };
}

/** The `task.input_disposition.resolved` payload of one artifact (lowercase keys). */
export function dispositionPayload(
  identity: { tenant: string; user: string; session: string; run: string },
  d: ResolvedDisposition,
  occurredAt: string,
): Record<string, unknown> {
  return {
    identity,
    task_id: identity.run,
    artifact_id: d.artifact_id,
    mime: d.mime,
    disposition: d.disposition,
    layer: d.layer,
    degraded: d.degraded,
    ...(d.degraded_from === undefined ? {} : { degraded_from: d.degraded_from }),
    ...(d.degradation_reason === undefined ? {} : { degradation_reason: d.degradation_reason }),
    ...(d.tool === undefined ? {} : { tool: d.tool }),
    occurred_at: occurredAt,
  };
}

/** The fixed event id of an artifact's disposition event: a redelivered run's re-publication is dropped. */
export function dispositionEventId(taskId: string, artifactId: string): string {
  return `${taskId}:disposition:${artifactId}`;
}

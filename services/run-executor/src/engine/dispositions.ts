import type { InputArtifactRecord } from '../domain/task.ts';
import { isSupportedImage } from '../providers/capabilities.ts';
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
 * - `inline`: the content is put into the prompt — text types at most the
 *   inline limit, and images (PNG, JPEG, WebP, GIF) at most the image limit
 *   when the run's model takes images (`providers/capabilities.ts`), sent as
 *   image content beside the query (`multimodal-inputs.ts`); else degraded
 *   to `ref` (`not_text`: neither text nor an image the model takes;
 *   `too_large`; `read_failed` when the bytes could not be fetched);
 * - `provider_native`: an image, at most the image limit, uploaded to the
 *   provider's file API and named by its file id beside the query, when the
 *   model takes images and the provider has a file API; else degraded to
 *   `ref` (`provider_native_unsupported`, or `too_large`);
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
  /** `image`: an inline or provider_native image, sent beside the query rather than in the system prompt. */
  readonly modality?: 'image';
}

/** What the run's provider and model take besides text (absent: nothing). */
export interface MediaSupport {
  /** The model takes images. */
  readonly acceptsImages: boolean;
  /** The provider has a file API (`provider_native`). */
  readonly providerFiles: boolean;
  /** Most bytes of one image, inline or uploaded. */
  readonly imageMaxBytes: number;
  /** Most bytes of all the run's inline images together (they stay in memory for the run). */
  readonly inlineImagesMaxBytes: number;
}

/** What resolution needs besides the artifact. */
export interface DispositionContext {
  readonly agentDefault?: string | undefined;
  readonly exposedTools: ReadonlySet<string>;
  readonly inlineMaxBytes: number;
  readonly media?: MediaSupport | undefined;
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
  const size = artifact.size_bytes ?? Number.POSITIVE_INFINITY;
  const { media } = context;
  const image = media?.acceptsImages === true && isSupportedImage(mime);
  if (value === 'inline') {
    if (image) {
      if (size > media.imageMaxBytes) return degrade('too_large');
      return { ...base, disposition: value, degraded: false, modality: 'image' };
    }
    if (!isTextual(mime)) return degrade('not_text');
    if (size > context.inlineMaxBytes) return degrade('too_large');
    return { ...base, disposition: value, degraded: false };
  }
  if (value === 'provider_native') {
    if (!image || !media.providerFiles) return degrade('provider_native_unsupported');
    if (size > media.imageMaxBytes) return degrade('too_large');
    return { ...base, disposition: value, degraded: false, modality: 'image' };
  }
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
  if (d.modality === 'image') return `${head}: attached to the query as an image.`;
  if (d.disposition === 'inline' && content !== undefined) return `${head}, inline:\n${content}`;
  if (d.tool !== undefined) return `${head}: use the ${d.tool} tool on it.`;
  return `${head}: by reference; read it with the ${SERVICE_TOOL_NAMES.artifactRead} tool when needed.`;
}

/** An input image sent beside the query: its bytes when inline (read at the claim), none when uploaded. */
export interface InputImage {
  readonly artifact_id: string;
  readonly mime: string;
  readonly disposition: 'inline' | 'provider_native';
  /** inline: the image, at most the image limit. */
  readonly bytes?: Uint8Array | undefined;
}

/** The input artifacts of a run: their resolved dispositions and the prompt section. */
export interface InputArtifactsPlan {
  readonly resolved: readonly ResolvedDisposition[];
  /** `''` when the run has no input artifacts. */
  readonly prompt: string;
  /** The inline and provider_native images, in input order. */
  readonly images: readonly InputImage[];
}

/** `d` degraded to `ref` for `reason`. */
function degraded(d: ResolvedDisposition, reason: string): ResolvedDisposition {
  const { disposition, layer, artifact_id, mime, size_bytes } = d;
  return {
    artifact_id,
    mime,
    size_bytes,
    layer,
    disposition: RUNTIME_DEFAULT_DISPOSITION,
    degraded: true,
    degraded_from: disposition,
    degradation_reason: reason,
  };
}

/** Inline images past the run's total (by declared size, in input order) degrade `too_large`. */
function withinImageBudget(resolved: readonly ResolvedDisposition[], budget: number): ResolvedDisposition[] {
  let used = 0;
  return resolved.map((d) => {
    if (d.modality !== 'image' || d.disposition !== 'inline') return d;
    used += d.size_bytes ?? 0;
    return used > budget ? degraded(d, 'too_large') : d;
  });
}

type Fetched = [ResolvedDisposition, content: Uint8Array | undefined];

/** Reads an inline artifact's bytes; one longer than its limit or that cannot be read degrades to `ref`. */
async function fetchInline(
  d: ResolvedDisposition,
  context: DispositionContext,
  io: ArtifactIo,
  owner: ToolOwner,
): Promise<Fetched> {
  if (d.disposition !== 'inline') return [d, undefined];
  const image = d.modality === 'image';
  const limit = image ? (context.media?.imageMaxBytes ?? 0) : context.inlineMaxBytes;
  try {
    const read = await io.read(owner, d.artifact_id, limit);
    // The artifact is longer than its metadata said: an image is not sent cut short.
    if (image && read.truncated) return [degraded(d, 'too_large'), undefined];
    return [d, read.bytes];
  } catch {
    // Whatever failed, the run goes on with a reference: the degradation is reported in its disposition event.
    return [degraded(d, 'read_failed'), undefined];
  }
}

/**
 * Resolves every input artifact and fetches the content of the inline ones
 * (in parallel); an inline artifact whose bytes cannot be read degrades to
 * `ref` (`read_failed`), as does an inline image longer than the image
 * limit or past the run's inline image total (`too_large`).
 */
export async function planInputArtifacts(
  artifacts: readonly InputArtifactRecord[],
  context: DispositionContext,
  io: ArtifactIo,
  owner: ToolOwner,
): Promise<InputArtifactsPlan> {
  if (artifacts.length === 0) return { resolved: [], prompt: '', images: [] };
  const resolved = withinImageBudget(
    artifacts.map((artifact) => resolveDisposition(artifact, context)),
    context.media?.inlineImagesMaxBytes ?? 0,
  );
  const entries = await Promise.all(resolved.map((d) => fetchInline(d, context, io, owner)));
  const prompt = `Input artifacts:\n${entries
    .map(([d, bytes]) =>
      promptEntry(d, bytes === undefined || d.modality === 'image' ? undefined : Buffer.from(bytes).toString('utf8')),
    )
    .join('\n')}`;
  const images = entries.flatMap(([d, bytes]): InputImage[] =>
    d.modality === 'image' && (d.disposition === 'inline' || d.disposition === 'provider_native')
      ? [{ artifact_id: d.artifact_id, mime: d.mime, disposition: d.disposition, bytes }]
      : [],
  );
  return { resolved: entries.map(([d]) => d), prompt, images };
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

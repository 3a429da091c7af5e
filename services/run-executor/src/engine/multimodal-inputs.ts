import type { ChatMessage, ContentPart, LlmProvider, ProviderSettings } from '../providers/provider.ts';
import { acceptsImages, hasFileApi } from '../providers/capabilities.ts';
import { providerName } from '../providers/select.ts';
import { SERVICE_TOOL_NAMES } from '../tools/service-tools.ts';
import type { InputImage } from './dispositions.ts';
import { occurredAt } from './run-events.ts';

/**
 * A run's input images on their way to its provider, per call: the query
 * message carries one `artifact` placeholder part per image
 * ({@link RunMedia.placeholders}), replaced before each provider call
 * ({@link RunMedia.materialize}) by what that provider and model take —
 * the run may have failed over to another since its dispositions were
 * resolved:
 *
 * - a model that takes no images gets a text reference (the `ref`
 *   treatment: the planner may read the artifact with `artifact_read`);
 * - an `inline` image goes as a data URL (its bytes were read at the claim);
 *   `llm.image.materialized` is published the first time the run sends it;
 * - a `provider_native` image is uploaded to the provider's file API once
 *   per run and provider installation, and named by its file id;
 *   `llm.provider_file.uploaded` records the id. A provider without a file
 *   API, or an upload that fails, gets the text reference instead (logged);
 *   a failed upload is not tried again by this claim of the run.
 *
 * Once per run: the events have fixed ids (the stream drops a redelivery's
 * copies within its duplicate window) and a claim first recalls what the
 * run's earlier claims published ({@link RecalledMedia}, from the EVENTS
 * stream: the durable record of the run's uploads), so a redelivered run
 * neither uploads an image again nor publishes its event twice.
 */

/** Where a call goes: the provider, its settings and the model. */
export interface MediaTarget {
  readonly provider: LlmProvider;
  readonly settings: ProviderSettings;
  readonly model: string;
}

/** What the run's earlier claims published. */
export interface RecalledMedia {
  /** Artifact ids of `llm.image.materialized`. */
  readonly materialized: ReadonlySet<string>;
  /** File ids of `llm.provider_file.uploaded`, by {@link fileKey}. */
  readonly files: ReadonlyMap<string, string>;
}

/** What the run's media needs from its run. */
export interface RunMediaDeps {
  readonly taskId: string;
  readonly quad: { tenant: string; user: string; session: string; run: string };
  /** Reads an uploaded image's bytes (at most `maxBytes`; `truncated` when longer). */
  read(artifactId: string, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }>;
  readonly imageMaxBytes: number;
  /** Publishes one of the run's events under a fixed id. */
  emit(type: string, payload: Record<string, unknown>, eventId: string): void;
  /** What earlier claims published; asked once, at the first call that sends an image. */
  recall(): Promise<RecalledMedia>;
  /** Logs a failed upload (the call goes on with a text reference). */
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface RunMedia {
  /** The query message's parts: one `artifact` placeholder per input image (none: no images). */
  readonly placeholders: readonly ContentPart[];
  /** `messages` with every `artifact` part replaced by what `target` takes. */
  materialize(messages: readonly ChatMessage[], target: MediaTarget, signal: AbortSignal): Promise<ChatMessage[]>;
}

/** The key of an uploaded file: the provider installation and the artifact. */
export function fileKey(provider: string, artifactId: string): string {
  return `${provider}\u0000${artifactId}`;
}

/** Fixed event ids: one event per image (per provider installation for uploads) per run. */
export const MEDIA_EVENT_IDS = {
  materialized: (taskId: string, artifactId: string) => `${taskId}:image:${artifactId}`,
  uploaded: (taskId: string, provider: string, artifactId: string) =>
    `${taskId}:provider_file:${encodeURIComponent(provider)}:${artifactId}`,
} as const;

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

function reference(image: InputImage, why: string): ContentPart {
  return {
    type: 'text',
    text: `[input image ${image.artifact_id} (${image.mime}) is not attached: ${why}; read it with the ${SERVICE_TOOL_NAMES.artifactRead} tool when needed]`,
  };
}

export function createRunMedia(images: readonly InputImage[], deps: RunMediaDeps): RunMedia {
  const byId = new Map(images.map((image) => [image.artifact_id, image]));
  const dataUrls = new Map<string, string>();
  const materialized = new Set<string>();
  // Uploads under way or done (file id), and failed ones (undefined), by fileKey.
  const uploads = new Map<string, Promise<string | undefined>>();
  let recalled: Promise<RecalledMedia> | undefined;
  const recall = (): Promise<RecalledMedia> =>
    (recalled ??= deps.recall().catch((error: unknown) => {
      deps.warn({ err: error }, 'input image events not recalled; an image may be uploaded again');
      return { materialized: new Set<string>(), files: new Map<string, string>() };
    }));

  async function inline(image: InputImage, bytes: Uint8Array, model: string): Promise<ContentPart> {
    let url = dataUrls.get(image.artifact_id);
    if (url === undefined) {
      url = `data:${image.mime};base64,${Buffer.from(bytes).toString('base64')}`;
      dataUrls.set(image.artifact_id, url);
    }
    if (!materialized.has(image.artifact_id)) {
      materialized.add(image.artifact_id);
      if (!(await recall()).materialized.has(image.artifact_id)) {
        deps.emit(
          'llm.image.materialized',
          {
            Identity: deps.quad,
            Model: model,
            ArtifactRef: image.artifact_id,
            MIME: image.mime,
            SizeBytes: bytes.length,
            OccurredAt: occurredAt(),
          },
          MEDIA_EVENT_IDS.materialized(deps.taskId, image.artifact_id),
        );
      }
    }
    return { type: 'image', artifact_id: image.artifact_id, mime: image.mime, data_url: url };
  }

  async function upload(image: InputImage, target: MediaTarget, provider: string, signal: AbortSignal) {
    const earlier = (await recall()).files.get(fileKey(provider, image.artifact_id));
    if (earlier !== undefined) return earlier;
    const uploadFile = target.provider.uploadFile?.bind(target.provider);
    if (uploadFile === undefined) return undefined;
    const { bytes, truncated } = await deps.read(image.artifact_id, deps.imageMaxBytes);
    if (truncated) throw new Error(`the artifact is longer than ${deps.imageMaxBytes} bytes`);
    const ext = EXTENSIONS[image.mime] ?? 'bin';
    const fileId = await uploadFile({ bytes, mime: image.mime, filename: `${image.artifact_id}.${ext}`, signal });
    deps.emit(
      'llm.provider_file.uploaded',
      {
        Identity: deps.quad,
        Provider: provider,
        Model: target.model,
        ArtifactRef: image.artifact_id,
        MIME: image.mime,
        Modality: 'image',
        FileID: fileId,
        SizeBytes: bytes.length,
        OccurredAt: occurredAt(),
      },
      MEDIA_EVENT_IDS.uploaded(deps.taskId, provider, image.artifact_id),
    );
    return fileId;
  }

  async function native(image: InputImage, target: MediaTarget, signal: AbortSignal): Promise<ContentPart> {
    if (!hasFileApi(target.settings)) return reference(image, 'this provider has no file API');
    const provider = providerName(target.settings);
    const key = fileKey(provider, image.artifact_id);
    let fileId = uploads.get(key);
    if (fileId === undefined) {
      fileId = upload(image, target, provider, signal).catch((error: unknown) => {
        if (signal.aborted) {
          // A cancelled upload is tried again by the next call (if any): it was not a failure of the provider.
          uploads.delete(key);
          throw error;
        }
        deps.warn({ err: error, artifactId: image.artifact_id, provider }, 'input image upload failed');
        return undefined;
      });
      uploads.set(key, fileId);
    }
    const id = await fileId;
    if (id === undefined) return reference(image, 'its upload to the provider failed');
    return { type: 'file', artifact_id: image.artifact_id, mime: image.mime, file_id: id };
  }

  async function resolvePart(part: ContentPart, target: MediaTarget, signal: AbortSignal): Promise<ContentPart> {
    if (part.type !== 'artifact') return part;
    const image = byId.get(part.artifact_id);
    if (image === undefined) return part;
    if (!acceptsImages(target.settings, target.model)) {
      return reference(image, `the model ${target.model} does not take images`);
    }
    if (image.disposition === 'provider_native') return native(image, target, signal);
    if (image.bytes === undefined) return reference(image, 'its bytes were not read');
    return inline(image, image.bytes, target.model);
  }

  return {
    placeholders: images.map((image) => ({ type: 'artifact', artifact_id: image.artifact_id, mime: image.mime })),
    async materialize(messages, target, signal) {
      if (!messages.some((m) => m.parts?.some((p) => p.type === 'artifact'))) return [...messages];
      return Promise.all(
        messages.map(async (m) =>
          m.parts === undefined
            ? m
            : { ...m, parts: await Promise.all(m.parts.map((p) => resolvePart(p, target, signal))) },
        ),
      );
    },
  };
}

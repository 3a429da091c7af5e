import { acceptsImages, hasFileApi } from '../providers/capabilities.ts';
import { modelOf } from '../providers/select.ts';
import type { AgentRunConfig } from './agent-config.ts';
import type { InputImage, MediaSupport } from './dispositions.ts';
import { createRunMedia } from './multimodal-inputs.ts';
import type { RunMedia } from './multimodal-inputs.ts';
import { recallRunMedia } from './multimodal-recall.ts';
import type { RunState } from './run-state.ts';

/**
 * The multimodal inputs of a claimed run, wired to the run: what its model
 * takes (for the dispositions resolved at the claim) and its {@link RunMedia}.
 */

/**
 * Most bytes of one input image, inline or uploaded to the provider: 5 MiB
 * (within every vision API's per-image limit). A larger image is degraded
 * to `ref` (`too_large`) at the claim; one whose bytes turn out longer than
 * its metadata said is degraded when read.
 */
export const IMAGE_INPUT_MAX_BYTES = 5 * 1024 * 1024;

/**
 * Most bytes of all of a run's inline images together: 10 MiB. They stay in
 * the executor's memory for the run's life (sent again with every call);
 * the images past it, in input order, are degraded to `ref` (`too_large`).
 */
export const INLINE_IMAGES_MAX_BYTES = 10 * 1024 * 1024;

/** What the run's model, as configured at its claim, takes besides text. */
export function mediaSupport(agent: AgentRunConfig): MediaSupport {
  return {
    acceptsImages: acceptsImages(agent.provider, modelOf(agent.provider, agent.params)),
    providerFiles: hasFileApi(agent.provider),
    imageMaxBytes: IMAGE_INPUT_MAX_BYTES,
    inlineImagesMaxBytes: INLINE_IMAGES_MAX_BYTES,
  };
}

/** The run's input images on their way to its provider; undefined when it has none. */
export function runMedia(run: RunState, images: readonly InputImage[]): RunMedia | undefined {
  if (images.length === 0) return undefined;
  const quad = run.events.quad;
  return createRunMedia(images, {
    taskId: run.taskId,
    quad,
    imageMaxBytes: IMAGE_INPUT_MAX_BYTES,
    read: (artifactId, maxBytes) => run.deps.artifacts.read(run.owner, artifactId, maxBytes),
    emit: (type, payload, eventId) => run.events.emit(type, payload, eventId),
    recall: () => recallRunMedia(run.deps.bus, quad),
    warn: (fields, message) => run.log.warn({ ...fields, taskId: run.taskId }, message),
  });
}

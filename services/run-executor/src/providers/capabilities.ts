import type { ProviderSettings } from './provider.ts';

/**
 * What a provider and model accept besides text, known from the provider
 * kind and the model's name (the agent configuration has no capability
 * member):
 *
 * - images: the `scripted` provider takes every image (it reports what it
 *   received, for tests); an `openai` installation takes them when the
 *   model's name is one of {@link IMAGE_MODEL_PATTERNS} — OpenAI's vision
 *   families and the usual open vision models served by OpenAI-compatible
 *   servers. A model the table does not know takes none: its images get the
 *   `ref` treatment (a text reference) rather than a request it may refuse.
 * - a file API (`POST /v1/files`): `openai` installations only.
 *
 * Image formats are those OpenAI's vision input takes: PNG, JPEG, WebP and
 * non-animated GIF; any other image type is treated as binary.
 */

/** Model names (lowercased, any `org/` prefix removed) that take images. */
export const IMAGE_MODEL_PATTERNS: readonly RegExp[] = [
  /^(chatgpt-)?gpt-4o/,
  /^gpt-4\.1/,
  /^gpt-4\.5/,
  /^gpt-4-turbo(?!-preview)/,
  /^gpt-4-vision/,
  /^gpt-5/,
  /^o1(?!-mini|-preview)/,
  /^o3(?!-mini)/,
  /^o4-mini/,
  /vision/,
  /llava/,
  /[-_.]vl\b|[-_]vl[-_]/,
  /pixtral/,
  /gemma-?3/,
  /llama-?4/,
  /moondream/,
  /minicpm-v/,
];

/** The image MIME types a model taking images is sent. */
export const IMAGE_MIME_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** True when `mime` (parameters ignored) is an image type models are sent. */
export function isSupportedImage(mime: string): boolean {
  return IMAGE_MIME_TYPES.has(mime.split(';')[0]?.trim().toLowerCase() ?? '');
}

/** True when `model` on this provider takes images. */
export function acceptsImages(settings: Pick<ProviderSettings, 'kind'>, model: string): boolean {
  if (settings.kind === 'scripted') return true;
  const name = model.toLowerCase().split('/').at(-1) ?? '';
  return IMAGE_MODEL_PATTERNS.some((pattern) => pattern.test(name));
}

/** True when the provider has a file API the run can upload `provider_native` artifacts to. */
export function hasFileApi(settings: Pick<ProviderSettings, 'kind'>): boolean {
  return settings.kind === 'openai';
}

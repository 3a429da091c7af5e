import { ServiceError } from '@ars/contracts';

/** Why an artifact of `sizeBytes` is refused: the message names both sizes and the variable that sets the limit. */
export function tooLargeMessage(sizeBytes: number, maxBytes: number): string {
  return `the artifact is ${sizeBytes} bytes; the largest accepted is ${maxBytes} bytes (ARTIFACT_MAX_BYTES)`;
}

/** Refuses `sizeBytes` above `maxBytes` (413 `payload_too_large`, see {@link tooLargeMessage}). */
export function assertWithinLimit(sizeBytes: number, maxBytes: number): void {
  if (sizeBytes <= maxBytes) return;
  throw new ServiceError('payload_too_large', tooLargeMessage(sizeBytes, maxBytes));
}

/** Bytes of base64 text that decode to `bytes` bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/**
 * The largest artifact `artifacts.get` returns inline: its base64 text plus
 * the reply envelope must fit one bus message of `maxPayload` bytes.
 * `envelopeBytes` reserves room for the metadata and the JSON around it.
 */
export function inlineLimit(maxPayload: number, envelopeBytes = 16 * 1024): number {
  return Math.max(0, Math.floor(((maxPayload - envelopeBytes) / 4) * 3));
}

import { ServiceError } from '@ars/contracts';

/** Refuses `sizeBytes` above `maxBytes` with a message naming both and the variable that sets the limit. */
export function assertWithinLimit(sizeBytes: number, maxBytes: number): void {
  if (sizeBytes <= maxBytes) return;
  throw new ServiceError(
    'payload_too_large',
    `the artifact is ${sizeBytes} bytes; the largest accepted is ${maxBytes} bytes (ARTIFACT_MAX_BYTES)`,
  );
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

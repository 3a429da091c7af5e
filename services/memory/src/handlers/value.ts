import { ServiceError } from '@ars/contracts';

/** The JSON text of a memory value and its size, within `maxBytes`. */
export function encodeValue(value: unknown, maxBytes: number): { value_json: string; size_bytes: number } {
  if (value === undefined) throw new ServiceError('invalid_request', 'value: a JSON value is required');
  const valueJson = JSON.stringify(value);
  const size = Buffer.byteLength(valueJson);
  if (size > maxBytes) {
    throw new ServiceError(
      'payload_too_large',
      `the memory value is ${size} bytes of JSON; the largest accepted is ${maxBytes} bytes (MEMORY_MAX_ITEM_BYTES)`,
    );
  }
  return { value_json: valueJson, size_bytes: size };
}

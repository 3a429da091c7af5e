/**
 * Control payload bounds (Limits section), enforced at the edge. Exceeding
 * any of them gives 422 `payload_invalid`; a payload is never truncated.
 */
export const CONTROL_PAYLOAD_LIMITS = {
  /** Maximum nesting depth; the payload object itself is depth 1. */
  maxDepth: 6,
  /** Maximum number of keys, counted over every object in the payload. */
  maxKeys: 64,
  /** Maximum items in any one list. */
  maxListItems: 50,
  /** Maximum characters in any one string (keys included). */
  maxStringChars: 4096,
  /** Maximum serialised size in bytes (UTF-8 JSON). */
  maxTotalBytes: 16 * 1024,
} as const;

/** A bound that a payload broke, with a message naming it. */
export interface PayloadBoundViolation {
  readonly bound: keyof typeof CONTROL_PAYLOAD_LIMITS;
  readonly message: string;
}

/**
 * Most characters (Unicode code points) a `start` request's `query` may have:
 * 65,536, about 16,000 tokens of English. A longer query is 400
 * `invalid_request`. The bound keeps every task row, and so every task read,
 * well inside one bus message (1 MiB): a row carries `query` and `goal`, at
 * most 4 UTF-8 bytes per character each.
 */
export const START_QUERY_MAX_CHARS = 65_536;

/**
 * Characters of a string as Unicode code points (an emoji is one character,
 * not two UTF-16 units), for comparing with the bound `max`. Only counts when
 * the UTF-16 length exceeds `max`, since the code-point count is never
 * larger: within `max` it answers the UTF-16 length (an upper bound, enough to
 * decide); beyond it, the exact count (for the message).
 */
export function characterCount(value: string, max: number): number {
  if (value.length <= max) return value.length;
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/**
 * Checks a control payload against the bounds. Returns the first violation
 * found, or `undefined` when the payload is within every bound.
 */
export function checkPayloadBounds(
  payload: unknown,
  limits: typeof CONTROL_PAYLOAD_LIMITS = CONTROL_PAYLOAD_LIMITS,
): PayloadBoundViolation | undefined {
  let keys = 0;
  const walk = (value: unknown, depth: number): PayloadBoundViolation | undefined => {
    if (typeof value === 'string') {
      const chars = characterCount(value, limits.maxStringChars);
      return chars > limits.maxStringChars
        ? {
            bound: 'maxStringChars',
            message: `a string has ${chars} characters; the limit is ${limits.maxStringChars}`,
          }
        : undefined;
    }
    if (value === null || typeof value !== 'object') return undefined;
    if (depth > limits.maxDepth) {
      return { bound: 'maxDepth', message: `payload nests deeper than ${limits.maxDepth} levels` };
    }
    if (Array.isArray(value)) {
      if (value.length > limits.maxListItems) {
        return {
          bound: 'maxListItems',
          message: `a list has ${value.length} items; the limit is ${limits.maxListItems}`,
        };
      }
      for (const item of value) {
        const violation = walk(item, depth + 1);
        if (violation) return violation;
      }
      return undefined;
    }
    for (const [key, item] of Object.entries(value)) {
      keys += 1;
      if (keys > limits.maxKeys) return { bound: 'maxKeys', message: `payload has more than ${limits.maxKeys} keys` };
      const keyChars = characterCount(key, limits.maxStringChars);
      if (keyChars > limits.maxStringChars) {
        return {
          bound: 'maxStringChars',
          message: `a key has ${keyChars} characters; the limit is ${limits.maxStringChars}`,
        };
      }
      const violation = walk(item, depth + 1);
      if (violation) return violation;
    }
    return undefined;
  };
  // The walk first: it stops at the depth bound, where serialising a payload nested
  // thousands of levels deep would overflow the stack.
  const shaped = walk(payload, 1);
  if (shaped !== undefined) return shaped;
  const size = Buffer.byteLength(JSON.stringify(payload) ?? '', 'utf8');
  if (size > limits.maxTotalBytes) {
    return { bound: 'maxTotalBytes', message: `payload is ${size} bytes; the limit is ${limits.maxTotalBytes}` };
  }
  return undefined;
}

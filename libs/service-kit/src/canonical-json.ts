import { createHash } from 'node:crypto';

/**
 * The content hash of JSON configurations (`content_hash`: agent-registry's
 * revisions, the effective configuration a run records), computed the same
 * way by every service that compares or recomputes one.
 */

function canonicalValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : canonicalValue(item)));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = canonicalValue(member);
    }
    return out;
  }
  return value;
}

/**
 * The canonical JSON text of a JSON value: object keys sorted by UTF-16 code
 * unit order at every depth, no whitespace, `undefined` members dropped (as
 * `JSON.stringify` does), array order kept. Two configurations that differ
 * only in key order have the same text.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalValue(value));
}

/** `sha256:<hex>` of the canonical JSON of `value`: a revision's `content_hash`. */
export function contentHash(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')}`;
}

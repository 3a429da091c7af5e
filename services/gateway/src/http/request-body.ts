import { ServiceError, checkPayloadBounds } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Parses a raw request body as a JSON object; anything else is 400 `invalid_request`. */
export function parseJsonObject(raw: unknown, contentType: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw === '') {
    throw new ServiceError('invalid_request', 'the request body must be a JSON object with an identity member');
  }
  if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) {
    throw new ServiceError('invalid_request', 'the request body must be sent as Content-Type: application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(String(raw));
  } catch {
    throw new ServiceError('invalid_request', 'the request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ServiceError('invalid_request', 'the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * How deep a request body may nest, its top-level object being level 1. Far
 * above what any method's schema describes, and far below where serialising
 * it to forward it would overflow the stack (a RangeError, not an answer).
 */
export const MAX_BODY_DEPTH = 64;

/** True when `value` nests objects or lists deeper than `max` levels; iterative, so any depth is safe to measure. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<readonly [unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** A body nested deeper than {@link MAX_BODY_DEPTH} is 400 `invalid_request`. */
export function enforceBodyDepth(body: Record<string, unknown>): void {
  if (nestsDeeperThan(body, MAX_BODY_DEPTH)) {
    throw new ServiceError('invalid_request', `the request body nests deeper than ${MAX_BODY_DEPTH} levels`);
  }
}

/**
 * Limits: a steering control's `payload` is checked against every bound
 * before schema validation; a breach is 422 `payload_invalid`, never truncated.
 */
export function enforcePayloadBounds(method: MethodDef, body: Record<string, unknown>): void {
  if (method.steering === undefined || !Object.hasOwn(body, 'payload')) return;
  const violation = checkPayloadBounds(body.payload);
  if (violation !== undefined) throw new ServiceError('payload_invalid', `payload: ${violation.message}`);
}

interface Issue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly keys?: readonly string[];
}

function describeIssue(issue: Issue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) {
    const named = issue.keys.map((key) => (path === '' ? key : `${path}.${key}`));
    return `unknown member ${named.join(', ')}`;
  }
  return `${path === '' ? '(body)' : path}: ${issue.message}`;
}

/** Validates the body against the method's request schema; 400 `invalid_request` naming the path. */
export function validateRequest(method: MethodDef, body: Record<string, unknown>): void {
  const result = method.request.safeParse(body);
  if (result.success) return;
  const issues = result.error.issues as readonly Issue[];
  const described = issues.slice(0, 3).map(describeIssue);
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  throw new ServiceError('invalid_request', `${method.name}: ${described.join('; ')}${more}`);
}

import { ERROR_STATUSES, RETRYABLE_CODES } from './generated/contract.ts';
import type { ServiceErrorCode } from './generated/contract.ts';

const ARS_ERROR_BRAND = Symbol.for('@ars/client/ArsError');

/**
 * The client's own codes: `method_not_allowed` (a bare 405), `invalid_response`
 * (a body that is not the protocol's), `http_<status>` (a non-2xx without an
 * envelope). A server that cannot be reached is `unavailable` with status 0.
 */
export type ClientErrorCode = 'method_not_allowed' | 'invalid_response' | `http_${number}`;

/** Every code an ArsError carries: the contract's error catalogue plus the client's own. */
export type ArsErrorCode = ServiceErrorCode | ClientErrorCode;

/**
 * The base of the client's errors, thrown by every call. `code` is the
 * server's envelope code (`identity_required`, `not_found`, …; see
 * {@link ServiceErrorCode}) or one of the client's own ({@link ClientErrorCode}).
 * Branch on `code` (or on the subclass), never on `message`.
 */
export class ArsError<C extends string = ArsErrorCode> extends Error {
  /** HTTP status; 0 when no response was received. */
  readonly status: number;
  readonly code: C;
  /** True when the same call may succeed after a delay (`unavailable`, `timeout`, `rate_limited`). */
  readonly retryable: boolean;
  readonly [ARS_ERROR_BRAND] = true;

  constructor(status: number, code: C, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ArsError';
    this.status = status;
    this.code = code;
    this.retryable = status === 0 || (RETRYABLE_CODES as readonly string[]).includes(code);
  }
}

/** 401: no identity resolved, or a token that failed verification. */
export class AuthenticationError extends ArsError<'identity_required' | 'auth_rejected'> {
  override readonly name = 'AuthenticationError';
}
/** 403: the caller's scopes or steering tier do not allow the call. */
export class PermissionDeniedError extends ArsError<'identity_scope_required' | 'scope_mismatch' | 'forbidden'> {
  override readonly name = 'PermissionDeniedError';
}
/** 404: a missing resource (or another tenant's), or a method outside the registry. */
export class NotFoundError extends ArsError<'not_found' | 'unknown_method'> {
  override readonly name = 'NotFoundError';
}
/** 400, 405, 413, 422, 431: the request itself is wrong; retrying it unchanged fails again. */
export class InvalidRequestError extends ArsError<
  'invalid_request' | 'payload_invalid' | 'payload_too_large' | 'headers_too_large' | 'method_not_allowed'
> {
  override readonly name = 'InvalidRequestError';
}
/** 409 `conflict` (a stale write) and 410 `session_erased` (use a fresh session id). */
export class ConflictError extends ArsError<'conflict' | 'session_erased'> {
  override readonly name = 'ConflictError';
}
/** 429: a rate limit or budget refused the call; retryable after a delay. */
export class RateLimitedError extends ArsError<'rate_limited'> {
  override readonly name = 'RateLimitedError';
}
/** 0, 408, 503, 504: the service (or the network) did not answer in time. */
export class UnavailableError extends ArsError<'unavailable' | 'timeout' | 'request_timeout'> {
  override readonly name = 'UnavailableError';
}
/** 501: the method or the blob driver's presigning is not built. */
export class UnimplementedError extends ArsError<'unimplemented' | 'presign_unsupported'> {
  override readonly name = 'UnimplementedError';
}
/** 500, an answer that is not the protocol's, or a non-2xx without an envelope. */
export class InternalError extends ArsError<'internal' | 'invalid_response' | `http_${number}`> {
  override readonly name = 'InternalError';
}

type ErrorClass = new (status: number, code: never, message: string, options?: { cause?: unknown }) => ArsError;

/** The class of each code of the catalogue (a test keeps it complete). */
export const ERROR_CLASSES: {
  readonly [C in ServiceErrorCode | Exclude<ClientErrorCode, `http_${number}`>]: ErrorClass;
} = {
  identity_required: AuthenticationError,
  auth_rejected: AuthenticationError,
  identity_scope_required: PermissionDeniedError,
  scope_mismatch: PermissionDeniedError,
  forbidden: PermissionDeniedError,
  not_found: NotFoundError,
  unknown_method: NotFoundError,
  invalid_request: InvalidRequestError,
  payload_invalid: InvalidRequestError,
  payload_too_large: InvalidRequestError,
  headers_too_large: InvalidRequestError,
  method_not_allowed: InvalidRequestError,
  request_timeout: UnavailableError,
  conflict: ConflictError,
  session_erased: ConflictError,
  rate_limited: RateLimitedError,
  internal: InternalError,
  invalid_response: InternalError,
  unimplemented: UnimplementedError,
  presign_unsupported: UnimplementedError,
  unavailable: UnavailableError,
  timeout: UnavailableError,
};

/**
 * The ArsError of a code: the subclass of its family, or a plain ArsError for
 * a code outside the catalogue (a newer server's). `http_<status>` is an InternalError.
 */
export function createArsError(status: number, code: string, message: string, options?: { cause?: unknown }): ArsError {
  const known = Object.hasOwn(ERROR_CLASSES, code)
    ? ERROR_CLASSES[code as keyof typeof ERROR_CLASSES]
    : /^http_\d+$/.test(code)
      ? InternalError
      : undefined;
  if (known === undefined) return new ArsError<string>(status, code, message, options) as ArsError;
  return new known(status, code as never, message, options);
}

/** The HTTP status of a code of the catalogue. */
export function statusOfCode(code: ServiceErrorCode): number {
  return ERROR_STATUSES[code];
}

/**
 * True for an ArsError from any copy of this package; with `code`, only for
 * that code (or one of those codes), narrowing `code`.
 */
export function isArsError<C extends ArsErrorCode>(value: unknown, ...codes: C[]): value is ArsError<C> {
  if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[ARS_ERROR_BRAND] !== true) {
    return false;
  }
  return codes.length === 0 || (codes as readonly string[]).includes((value as ArsError<string>).code);
}

/** Statuses that a reconnecting subscription retries instead of giving up. */
export function isRetryableStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

/**
 * Maps a non-2xx response to an ArsError: the `{code, message}` envelope when
 * there is one, `method_not_allowed` for a bare 405, else `http_<status>`.
 */
export async function errorFromResponse(response: Response): Promise<ArsError> {
  const text = await response.text().catch(() => '');
  return errorFromAnswer({ status: response.status, statusText: response.statusText, url: response.url, text });
}

/** {@link errorFromResponse} of an answer already read. */
export function errorFromAnswer(answer: {
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly text: string;
}): ArsError {
  const { status, text } = answer;
  const envelope = parseEnvelope(text);
  if (envelope) return createArsError(status, envelope.code, envelope.message);
  if (status === 405) {
    return createArsError(405, 'method_not_allowed', `${answer.url || 'route'} does not allow this HTTP method`);
  }
  const detail = text.trim().slice(0, 200) || answer.statusText || 'no body';
  return createArsError(status, `http_${status}`, `HTTP ${status}: ${detail}`);
}

function parseEnvelope(text: string): { code: string; message: string } | undefined {
  if (text === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const { code, message } = value as Record<string, unknown>;
    if (typeof code !== 'string' || code === '') return undefined;
    return { code, message: typeof message === 'string' ? message : code };
  } catch {
    return undefined;
  }
}

/** Wraps a fetch failure (connection refused, DNS, reset) as `unavailable`. */
export function networkError(url: string, cause: unknown): ArsError {
  const reason = cause instanceof Error ? describeCause(cause) : String(cause);
  return createArsError(0, 'unavailable', `cannot reach ${url}: ${reason}`, { cause });
}

function describeCause(error: Error): string {
  const inner = (error as { cause?: unknown }).cause;
  if (inner instanceof Error && inner.message) return inner.message;
  return error.message;
}

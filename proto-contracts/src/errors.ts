/**
 * The error catalogue: every code the service puts in the `{code, message}`
 * envelope, with its HTTP status. `docs/errors.md` has one row per code and a
 * test keeps the two in step.
 */
export const ERROR_CODES = {
  /** No identity resolved, or a body identity contradicting the verified one. */
  identity_required: 401,
  /** A token was present but failed verification. */
  auth_rejected: 401,
  /** Cross-identity fan-in or an admin verb without admin or console:fleet. */
  identity_scope_required: 403,
  /** Steering authority or a cross-tenant claim below what the call needs. */
  scope_mismatch: 403,
  /** Flat refusal of the dev bootstrap to a non-loopback peer or host. */
  forbidden: 403,
  /** Missing resource, cross-tenant id, or no live inbox for a control. */
  not_found: 404,
  /** A method name outside the canonical registry. */
  unknown_method: 404,
  /** Malformed JSON, an unknown member, a wrong type, an unknown agent_id. */
  invalid_request: 400,
  /** The request did not arrive in full in time (node's headers or request timeout); sent by the gateway's HTTP layer. */
  request_timeout: 408,
  /** A conflicting write (for example a stale revision). */
  conflict: 409,
  /** The session was erased by sessions.delete; use a fresh session id. */
  session_erased: 410,
  /** A body or artifact larger than the configured maximum, or a reply larger than the bus carries. */
  payload_too_large: 413,
  /** A control payload broke a bound of the Limits section. */
  payload_invalid: 422,
  /** A rate limit or budget refused the call. */
  rate_limited: 429,
  /** The request's header section is larger than the gateway's HTTP parser accepts. */
  headers_too_large: 431,
  /** An unexpected failure; details are in the log, never on the wire. */
  internal: 500,
  /** The owning service has not built this method yet. */
  unimplemented: 501,
  /** A blob driver that cannot presign URLs. */
  presign_unsupported: 501,
  /** The owning service did not answer (not running or overloaded). */
  unavailable: 503,
  /** The owning service did not answer in time. */
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The wire envelope of every error response. */
export interface ErrorEnvelope {
  readonly code: ErrorCode;
  readonly message: string;
}

/** Codes that a caller may retry after a delay. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['unavailable', 'timeout', 'rate_limited']);

const SERVICE_ERROR_BRAND = Symbol.for('@ars/contracts/ServiceError');

/**
 * The one error type that domain code throws. Only the gateway maps it to
 * HTTP. Branded with a global symbol so `isServiceError` works across
 * duplicate copies of this package.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /**
   * Why an internal endpoint refused, from the endpoint's declared refusal
   * reasons (`budget_exceeded`, `session_erased`, …); absent on other errors.
   * Travels in the RPC error reply, never in the public `{code, message}` envelope.
   */
  readonly reason?: string;
  readonly [SERVICE_ERROR_BRAND] = true;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean; reason?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.retryable = options?.retryable ?? RETRYABLE.has(code);
    if (options?.reason !== undefined) this.reason = options.reason;
  }

  /** The wire envelope: code and message only; never the stack or cause. */
  toEnvelope(): ErrorEnvelope {
    return { code: this.code, message: this.message };
  }
}

/** True for a ServiceError from any copy of this package. */
export function isServiceError(value: unknown): value is ServiceError {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SERVICE_ERROR_BRAND] === true
  );
}

/** True when `code` is in the catalogue. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/**
 * The normaliser used at every boundary: a ServiceError passes through, any
 * other throw becomes `internal` (the caller logs the original with its stack).
 */
export function toServiceError(error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  return new ServiceError('internal', 'internal error', { cause: error });
}

const ARS_ERROR_BRAND = Symbol.for('@ars/client/ArsError');

/**
 * The one error type of the client. `code` is the server's envelope code
 * (`identity_required`, `unknown_method`, …) or one of the client's own:
 * `method_not_allowed` (bare 405), `unavailable` (the server could not be
 * reached; `status` 0), `invalid_response` (a body that is not the protocol's),
 * `http_<status>` (a non-2xx without an envelope). Branch on `code`, never on `message`.
 */
export class ArsError extends Error {
  /** HTTP status; 0 when no response was received. */
  readonly status: number;
  readonly code: string;
  readonly [ARS_ERROR_BRAND] = true;

  constructor(status: number, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ArsError';
    this.status = status;
    this.code = code;
  }
}

/** True for an ArsError from any copy of this package. */
export function isArsError(value: unknown): value is ArsError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ARS_ERROR_BRAND] === true;
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
  if (envelope) return new ArsError(status, envelope.code, envelope.message);
  if (status === 405) {
    return new ArsError(405, 'method_not_allowed', `${answer.url || 'route'} does not allow this HTTP method`);
  }
  const detail = text.trim().slice(0, 200) || answer.statusText || 'no body';
  return new ArsError(status, `http_${status}`, `HTTP ${status}: ${detail}`);
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
  return new ArsError(0, 'unavailable', `cannot reach ${url}: ${reason}`, { cause });
}

function describeCause(error: Error): string {
  const inner = (error as { cause?: unknown }).cause;
  if (inner instanceof Error && inner.message) return inner.message;
  return error.message;
}

import { ServiceError, isServiceError } from '@ars/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggableUrl } from './loggable-url.ts';

/** fastify's own request errors, mapped onto the catalogue. */
const FASTIFY_CODES: Readonly<Record<string, ServiceError['code']>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
};

const FASTIFY_MESSAGES: Readonly<Record<string, string>> = {
  payload_too_large: 'the request body is larger than the gateway accepts',
  invalid_request: 'the request body must be JSON sent as application/json',
};

function fromFastify(error: FastifyError): ServiceError | undefined {
  const code = error.code === undefined ? undefined : FASTIFY_CODES[error.code];
  if (code !== undefined) return new ServiceError(code, FASTIFY_MESSAGES[code] ?? error.message, { cause: error });
  const status = error.statusCode;
  // A 4xx of fastify's that we do not know by code (e.g. a client abort) is still the client's.
  if (status !== undefined && status >= 400 && status < 500) {
    if (status === 413)
      return new ServiceError('payload_too_large', FASTIFY_MESSAGES.payload_too_large!, { cause: error });
    return new ServiceError('invalid_request', error.message, { cause: error });
  }
  return undefined;
}

/**
 * The one normaliser of the HTTP boundary: a ServiceError passes, fastify's
 * own client errors map to their code, anything else is `internal`.
 */
export function toHttpError(error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  if (error instanceof Error && 'code' in error) {
    const mapped = fromFastify(error as FastifyError);
    if (mapped !== undefined) return mapped;
  }
  return new ServiceError('internal', 'internal error', { cause: error });
}

/** The code of the envelope sent on each request that got one (read by the metrics at response time). */
const SENT_CODES = new WeakMap<FastifyRequest, string>();

/** The error code sent on `request`, if {@link sendError} answered it. */
export function sentErrorCode(request: FastifyRequest): string | undefined {
  return SENT_CODES.get(request);
}

/**
 * 503 `unavailable` and 504 `timeout` say that a service or nats-server
 * did not answer (a restart, an outage): expected in operation, and during
 * an outage every request gets one, so they are logged at warn with their
 * reason, without a stack.
 */
const DEPENDENCY_STATUSES: ReadonlySet<number> = new Set([503, 504]);

function reasonOf(error: unknown): string | undefined {
  return error instanceof Error ? error.message : undefined;
}

/**
 * Sends the `{code, message}` envelope. Logged: other 5xx at error with the
 * cause (and its stack); 503 and 504 at warn with the cause's message; 4xx
 * at info. A 501 is an answer about a surface that is not served
 * (unimplemented, presign_unsupported), not an outage: logged at info.
 */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toHttpError(error);
  SENT_CODES.set(request, mapped.code);
  const original = isServiceError(error) ? (error.cause ?? error) : error;
  if (DEPENDENCY_STATUSES.has(mapped.status)) {
    const cause = original === mapped ? undefined : reasonOf(original);
    request.log.warn(
      {
        code: mapped.code,
        url: loggableUrl(request.url),
        reason: mapped.message,
        ...(cause === undefined ? {} : { cause }),
      },
      'request failed: a dependency did not answer',
    );
  } else if (mapped.status >= 500 && mapped.status !== 501) {
    request.log.error({ err: original, code: mapped.code, url: loggableUrl(request.url) }, 'request failed');
  } else {
    request.log.info({ code: mapped.code, status: mapped.status, reason: mapped.message }, 'request refused');
  }
  return reply.code(mapped.status).type('application/json; charset=utf-8').send(mapped.toEnvelope());
}

/** The refusal of a path no route serves: `unknown_method` under `/v1/`, `not_found` elsewhere. */
function notServed(url: string): ServiceError {
  const path = url.split('?', 1)[0] ?? '';
  return path.startsWith('/v1/')
    ? new ServiceError('unknown_method', `no method is served at ${path}`)
    : new ServiceError('not_found', `nothing is served at ${path}`);
}

/**
 * fastify's `frameworkErrors`: the router's refusals that never reach the
 * error handler. A path that does not decode is 400 `invalid_request`; a path
 * segment over the router's length bound names no route (404).
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_BAD_URL') {
    return sendError(request, reply, new ServiceError('invalid_request', 'the request path is not a valid URL'));
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(request, reply, notServed(request.url));
  return sendError(request, reply, error);
}

/** Installs the envelope on every error and on every unmatched route of `app`. */
export function installErrorEnvelope(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notServed(request.url)));
}

import { z } from 'zod';
import { isErrorCode, ServiceError } from './errors.ts';

/**
 * The error half of the service-to-service RPC reply, `{ok: false, error}`.
 * `status`, `code` and `message` are what every reader has always read;
 * `retryable` and `reason` were added after them, so a reader that ignores
 * them still works, and a reply without them still reads (`retryable` then
 * follows the code, `reason` is absent). The public HTTP envelope stays
 * `{code, message}`: the gateway never forwards `retryable` or `reason`.
 */
export const ErrorReply = z.object({
  status: z.int().describe('HTTP status of the code'),
  code: z.string().describe('a code of the error catalogue; an unknown one reads as `internal`'),
  message: z.string(),
  retryable: z.boolean().optional().describe('the caller may ask again after a delay; absent: from the code'),
  reason: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("one of the internal endpoint's declared refusal reasons; absent on any other error"),
});
export type ErrorReply = z.infer<typeof ErrorReply>;

/** The wire form of `error`: its code, status and message, whether it may be retried, and its reason when it has one. */
export function toErrorReply(error: ServiceError): ErrorReply {
  return {
    status: error.status,
    code: error.code,
    message: error.message,
    retryable: error.retryable,
    ...(error.reason === undefined ? {} : { reason: error.reason }),
  };
}

/**
 * The ServiceError an error reply stands for, read leniently as the RPC
 * client always has: a code outside the catalogue reads as `internal`, a
 * missing message as `internal error`, a missing `retryable` follows the
 * code. Never throws: the caller must not act on what it cannot read.
 */
export function fromErrorReply(wire: unknown): ServiceError {
  const error = typeof wire === 'object' && wire !== null ? (wire as Record<string, unknown>) : {};
  const message = typeof error.message === 'string' ? error.message : 'internal error';
  if (!isErrorCode(error.code)) return new ServiceError('internal', message);
  const reason = ErrorReply.shape.reason.safeParse(error.reason);
  return new ServiceError(error.code, message, {
    ...(typeof error.retryable === 'boolean' ? { retryable: error.retryable } : {}),
    ...(reason.success && reason.data !== undefined ? { reason: reason.data } : {}),
  });
}

import { RUN_ERROR_CODES } from './planner.ts';

/**
 * The redacted `runtime.error` of a run that an unexpected engine error
 * ended `internal`. Nothing of the error's message, stack or cause goes out:
 * they may hold user content or secrets (they stay in the log). Its payload
 * is a constant Message and Fields of the error's class (its name when it is
 * a plain identifier), the run's ErrorCode and the step it failed at.
 */

/** The constant Message of every `runtime.error`. */
export const RUNTIME_ERROR_MESSAGE = 'unexpected engine error; the run failed internal';

const IDENTIFIER = /^[A-Za-z_$][\w$]{0,63}$/;

/** The class of a thrown value, safe to publish: an Error's name if it is an identifier, else its kind. */
export function errorClassOf(error: unknown): string {
  if (error instanceof Error) return IDENTIFIER.test(error.name) ? error.name : 'Error';
  return error === null ? 'null' : typeof error;
}

/** The fixed id of a run's `runtime.error` (one per run, however often it is redelivered). */
export function runtimeErrorEventId(taskId: string): string {
  return `${taskId}:runtime.error`;
}

/** The payload of a run's `runtime.error`. */
export function runtimeErrorPayload(error: unknown, step: number): Record<string, unknown> {
  return {
    Message: RUNTIME_ERROR_MESSAGE,
    Fields: { ErrorClass: errorClassOf(error), ErrorCode: RUN_ERROR_CODES.internal, Step: step },
  };
}

import type { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import { describeFirstIssue } from '@ars/service-kit';

/** Validates an internal endpoint's body; `invalid_request` naming the first bad path. */
export function parseBody<S extends z.ZodType>(endpoint: string, schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    throw new ServiceError('invalid_request', `invalid ${endpoint} request: ${describeFirstIssue(parsed.error)}`);
  }
  return parsed.data;
}

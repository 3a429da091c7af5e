import type { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import { describeFirstIssue } from '@ars/service-kit';

/** Parses an internal endpoint's body with its strict schema: 400 `invalid_request` naming the first bad path. */
export function parseInternalBody<S extends z.ZodType>(schema: S, endpoint: string, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new ServiceError('invalid_request', `invalid ${endpoint} request: ${describeFirstIssue(parsed.error)}`);
  }
  return parsed.data;
}

import { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { describeFirstIssue } from '@ars/service-kit';
import type { Catalog } from '../catalog/admission.ts';

/** The internal endpoint the run-executor calls before it accepts a start. */
export const ADMIT_ENDPOINT = '_session.admit';

/** Body of `_session.admit`: the full triple of the start. */
export const AdmitRequest = z.strictObject({
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
});
export type AdmitRequest = z.infer<typeof AdmitRequest>;

/** `_session.admit {tenant,user,session}` → `{state: 'opened' | 'reopened' | 'open'}`; `session_erased` for a tombstone. */
export function admitHandler(catalog: Catalog): RpcHandler {
  return async ({ body }) => {
    const parsed = AdmitRequest.safeParse(body);
    if (!parsed.success) {
      throw new ServiceError(
        'invalid_request',
        `invalid ${ADMIT_ENDPOINT} request: ${describeFirstIssue(parsed.error)}`,
      );
    }
    return { state: await catalog.admit(parsed.data) };
  };
}

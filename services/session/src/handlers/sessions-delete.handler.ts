import { PROTOCOL_VERSION, SessionsDeleteRequest } from '@ars/contracts';
import type { SessionsDeleteResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { requireOwnIdentity, typedMethod } from '@ars/service-kit';
import { verifiedTriple } from '../domain/scope.ts';
import type { Eraser } from '../erasure/eraser.ts';

/**
 * sessions.delete (right to erasure): the caller's own verified triple only
 * — a body identity differing from it is 401 `identity_required`, and there
 * is no admin path. Answers the receipt with the real counts; while the
 * cascade cannot finish it answers 503 `unavailable` (the session is already
 * tombstoned and the erasure is retried in the background).
 */
export function sessionsDeleteHandler(eraser: Eraser): RpcHandler {
  return typedMethod(SessionsDeleteRequest, async ({ identity, body: request }) => {
    requireOwnIdentity('sessions.delete', identity, request.identity);
    const receipt = await eraser.erase(verifiedTriple(identity), identity);
    const response: SessionsDeleteResponse = { ...receipt, protocol_version: PROTOCOL_VERSION };
    return response;
  });
}

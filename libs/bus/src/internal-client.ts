import { parseInternalReply, parseInternalRequest } from '@ars/contracts';
import type { InternalEndpointDef, InternalReply, InternalRequest, VerifiedIdentity } from '@ars/contracts';
import type { CallOptions, RpcClient } from './rpc-client.ts';

/** What {@link callInternal} needs of an RPC client: its `call` (an `RpcClient`, or a test's fake). */
export type InternalCaller = Pick<RpcClient, 'call'>;

/**
 * Calls an internal endpoint of the registry as `identity` and returns its
 * parsed reply. The body is checked against the endpoint's request schema
 * first: a bad one is 400 `invalid_request` and nothing is sent. A reply
 * that fails the endpoint's reply schema is `internal`. Failures are the
 * RPC client's ServiceErrors otherwise (`unavailable`, `timeout`, the
 * owner's refusal with its `reason`: read it with `refusalOf`).
 */
export async function callInternal<E extends InternalEndpointDef>(
  rpc: InternalCaller,
  endpoint: E,
  identity: VerifiedIdentity,
  body: InternalRequest<E>,
  options?: CallOptions,
): Promise<InternalReply<E>> {
  parseInternalRequest(endpoint, body);
  // The body as the caller built it goes out; the owner parses it again.
  const reply = await rpc.call(endpoint.service, endpoint.name, identity, body, options);
  return parseInternalReply(endpoint, reply);
}

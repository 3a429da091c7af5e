import { getInternalEndpoint, parseInternalRequest, serviceCallerIdentity } from '@ars/contracts';
import type { InternalEndpointDef, InternalParsedRequest, InternalReplyOut, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { requireAdmin } from './authority.ts';

/** One call of an internal endpoint as its handler sees it: the verified identity and the parsed body. */
export interface InternalCall<E extends InternalEndpointDef> {
  readonly identity: VerifiedIdentity;
  readonly body: InternalParsedRequest<E>;
}

/** Handles one internal endpoint; throw `refuse(endpoint, reason, …)` for a declared refusal. */
export type InternalHandlerFn<E extends InternalEndpointDef> = (call: InternalCall<E>) => Promise<InternalReplyOut<E>>;

/** An internal endpoint of the registry bound to its handler, as a service serves it. */
export interface InternalHandler {
  readonly endpoint: InternalEndpointDef;
  /** The handler behind the endpoint's gate and request schema. */
  readonly handler: RpcHandler;
}

/**
 * The identity a handler receives under the endpoint's gate: the verified
 * one for `caller` and `admin` (after the admin check); for `service`, the
 * owner's own {@link serviceCallerIdentity}, whatever the bus carried (the
 * body carries the capability; no claim of the caller may count).
 */
function gatedIdentity(endpoint: InternalEndpointDef, identity: VerifiedIdentity): VerifiedIdentity {
  switch (endpoint.gate) {
    case 'admin':
      requireAdmin(endpoint.name, identity);
      return identity;
    case 'service':
      return serviceCallerIdentity(endpoint.service);
    case 'caller':
      return identity;
  }
}

/**
 * Binds `handle` to `endpoint`. The kit applies the endpoint's gate first
 * (`admin`: 403 `identity_scope_required` without the claim; `service`: no
 * check, and the handler gets a fixed identity that grants nothing), then
 * parses the body with its request schema (400 `invalid_request` naming the
 * first bad path), and only then runs the handler, which receives the
 * parsed body.
 */
export function serveInternal<E extends InternalEndpointDef>(
  endpoint: E,
  handle: InternalHandlerFn<NoInfer<E>>,
): InternalHandler {
  return {
    endpoint,
    handler: async ({ identity, body }) => {
      const gated = gatedIdentity(endpoint, identity);
      return handle({ identity: gated, body: parseInternalRequest(endpoint, body) });
    },
  };
}

/**
 * The handlers of `service`'s internal endpoints by name. A handler for an
 * endpoint outside the registry, another service's, or bound twice is a
 * programming error and throws here, at boot.
 */
export function buildInternalTable(service: string, bound: readonly InternalHandler[]): Record<string, RpcHandler> {
  const table: Record<string, RpcHandler> = {};
  for (const { endpoint, handler } of bound) {
    if (getInternalEndpoint(endpoint.name) !== endpoint) {
      throw new Error(`${service}: internal endpoint ${endpoint.name} is not the registry's`);
    }
    if (endpoint.service !== service) {
      throw new Error(`${service} serves ${endpoint.name}, which ${endpoint.service} owns`);
    }
    if (Object.hasOwn(table, endpoint.name)) throw new Error(`${service} serves ${endpoint.name} twice`);
    table[endpoint.name] = handler;
  }
  return table;
}

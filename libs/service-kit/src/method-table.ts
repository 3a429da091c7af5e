import { describeFirstIssue, ServiceError } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { ServiceHandlers } from './service-definition.ts';

/** One registry method as the kit serves it. */
export interface MethodEndpoint {
  readonly method: string;
  /** False while the owner has not built it: the handler answers `unimplemented`. */
  readonly implemented: boolean;
  readonly handler: RpcHandler;
}

/** Names the first failing path of a zod error, e.g. `identity.tenant: Invalid input: …` (one copy, in the contracts). */
export { describeFirstIssue };

function validating(method: MethodDef, handler: RpcHandler): RpcHandler {
  return async (request) => {
    const parsed = method.request.safeParse(request.body);
    if (!parsed.success) {
      throw new ServiceError('invalid_request', `invalid ${method.name} request: ${describeFirstIssue(parsed.error)}`);
    }
    return handler({ ...request, body: parsed.data });
  };
}

function unimplemented(method: string): RpcHandler {
  return async () => {
    throw new ServiceError('unimplemented', `${method} is not implemented yet`);
  };
}

/**
 * The endpoints of every registry method `service` owns: a built handler
 * behind request validation (a bad body is `invalid_request` naming the first
 * failing path; the handler receives the parsed body), or an `unimplemented`
 * answer. A handler for a method the service does not own is a programming
 * error and throws here, at boot.
 */
export function buildMethodTable(
  service: string,
  methods: readonly MethodDef[],
  handlers: ServiceHandlers,
): MethodEndpoint[] {
  const owned = methods.filter((m) => m.service === service);
  const ownedNames = new Set(owned.map((m) => m.name));
  const stray = Object.keys(handlers).filter((name) => !ownedNames.has(name));
  if (stray.length > 0) {
    throw new Error(`${service} has handlers for methods it does not own: ${stray.join(', ')}`);
  }
  return owned.map((method) => {
    const handler = handlers[method.name];
    return handler === undefined
      ? { method: method.name, implemented: false, handler: unimplemented(method.name) }
      : { method: method.name, implemented: true, handler: validating(method, handler) };
  });
}

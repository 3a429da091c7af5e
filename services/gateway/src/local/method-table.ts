import { ServiceError } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import type { LocalHandler } from './local-handler.ts';

/** One gateway-owned method as served on NATS. */
export interface GatewayEndpoint {
  readonly method: string;
  /** False while a later issue has not built it: the handler answers `unimplemented`. */
  readonly implemented: boolean;
  readonly handler: LocalHandler;
}

/** The 501 of a gateway-owned method that a later issue builds. */
export function unimplemented(method: string): ServiceError {
  return new ServiceError('unimplemented', `${method} is not implemented yet by gateway`);
}

/**
 * Every registry method the gateway owns, for the services API: the local
 * handler behind request validation, or an `unimplemented` answer. Discovery
 * reads `implemented` from the endpoint metadata for runtime.info capabilities.
 */
export function gatewayEndpoints(
  methods: readonly MethodDef[],
  handlers: Readonly<Record<string, LocalHandler>>,
): GatewayEndpoint[] {
  return methods
    .filter((method) => method.service === 'gateway')
    .map((method) => {
      const handler = handlers[method.name];
      if (handler === undefined) {
        return {
          method: method.name,
          implemented: false,
          handler: async () => Promise.reject(unimplemented(method.name)),
        };
      }
      return {
        method: method.name,
        implemented: true,
        handler: async (request) => {
          const parsed = method.request.safeParse(request.body ?? {});
          if (!parsed.success)
            throw new ServiceError('invalid_request', `${method.name}: the request does not match its schema`);
          return handler(request);
        },
      };
    });
}

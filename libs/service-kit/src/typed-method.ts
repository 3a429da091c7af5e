import { describeFirstIssue, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { z } from 'zod';

/** One call of a registry method as a typed handler sees it: the body parsed by the method's request schema. */
export interface TypedCall<T> {
  readonly method: string;
  readonly identity: VerifiedIdentity;
  readonly body: T;
}

/** Handles one registry method whose body has been parsed to `T`; throw a ServiceError to answer with its code. */
export type TypedHandlerFn<T> = (call: TypedCall<T>) => Promise<unknown>;

/**
 * An `RpcHandler` typed by construction: `request` is the method's request
 * schema from the `@ars/contracts` registry (e.g. `SessionsListRequest`);
 * the body is parsed with it (a bad body is 400 `invalid_request` naming the
 * first failing path, as the method table answers) and `handle` receives
 * the parsed body as `z.output` of the schema. The method table validated
 * the body already; this is defence in depth, and the handler's types come
 * from the schema instead of a cast. Parsing a parsed body is idempotent
 * (request schemas are strict objects with no transforms; defaults are
 * already in place), so a handler sees the same body either way.
 */
export function typedMethod<T>(request: z.ZodType<T>, handle: TypedHandlerFn<NoInfer<T>>): RpcHandler {
  return async ({ method, identity, body }) => {
    const parsed = request.safeParse(body);
    if (!parsed.success) {
      throw new ServiceError('invalid_request', `invalid ${method} request: ${describeFirstIssue(parsed.error)}`);
    }
    return handle({ method, identity, body: parsed.data });
  };
}

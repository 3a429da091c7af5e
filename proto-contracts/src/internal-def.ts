import type { z } from 'zod';
import { isServiceError, ServiceError } from './errors.ts';
import type { ErrorCode } from './errors.ts';
import type { VerifiedIdentity } from './identity.ts';
import type { ServiceName } from './method-def.ts';
import { describeFirstIssue } from './zod-issues.ts';

/**
 * Internal endpoints: the service-to-service calls (`_service.verb`) that
 * the gateway never routes. Each is a contract like a registry method: its
 * owner, a request and a reply schema, who may call it, and the refusals a
 * caller may act on, each with the catalogue code it travels under and
 * whether asking again may succeed. The reason travels in the RPC error
 * reply (`reason`), so no caller reads it from a message.
 */

/** One declared refusal of an internal endpoint. */
export interface RefusalDef {
  /** The catalogue code the refusal travels under (what a caller that knows no reason sees). */
  readonly code: ErrorCode;
  /** Whether asking again later may succeed. @default the code's own (`rate_limited`, `unavailable`, `timeout`) */
  readonly retryable?: boolean;
  readonly summary: string;
}

/**
 * Who may call, checked before the body is read: `caller` (any verified
 * identity; the handler checks what the body names against it) or `admin`
 * (the verified `admin` claim, else 403 `identity_scope_required`), or
 * `service` (no end user behind the call, such as the gateway relaying an
 * OAuth redirect: the body carries its own capability, and the handler
 * ignores the identity the bus carries).
 */
export type InternalGate = 'caller' | 'admin' | 'service';

/**
 * The identity a service sends over the bus when it calls a `service`-gated
 * endpoint with no end user behind the call (the bus carries an identity on
 * every request): tenant `_system`, the calling service as `user`, session
 * `_service`, no scopes. It grants nothing: the owner's kit hands the handler
 * this same identity whatever the bus carried, so no claim can ride along.
 */
export function serviceCallerIdentity(service: ServiceName): VerifiedIdentity {
  return Object.freeze({ tenant: '_system', user: service, session: '_service', scopes: Object.freeze([]) });
}

/** One row of the internal endpoint registry. */
export interface InternalEndpointDef<
  Req extends z.ZodType = z.ZodType,
  Rep extends z.ZodType = z.ZodType,
  R extends string = string,
> {
  /** The wire name, `_<area>.<verb>`, served on `ars.rpc.<service>.<name>`. */
  readonly name: string;
  /** The owning service, which serves it. */
  readonly service: ServiceName;
  /** The services that call it. */
  readonly callers: readonly ServiceName[];
  readonly gate: InternalGate;
  /** The body; strict: an unknown member is `invalid_request`. */
  readonly request: Req;
  /** The result of a successful call; open: members added later are ignored by older callers. */
  readonly reply: Rep;
  /** The refusals a caller may act on, by reason. */
  readonly refusals: Readonly<Record<R, RefusalDef>>;
  readonly summary: string;
}

/** What a caller sends: the request schema's input (defaults may be left out). */
export type InternalRequest<E extends InternalEndpointDef> = z.input<E['request']>;
/** What the handler receives: the parsed request. */
export type InternalParsedRequest<E extends InternalEndpointDef> = z.output<E['request']>;
/** What the handler answers: the reply schema's input. */
export type InternalReplyOut<E extends InternalEndpointDef> = z.input<E['reply']>;
/** What a caller receives: the parsed reply. */
export type InternalReply<E extends InternalEndpointDef> = z.output<E['reply']>;
/** The refusal reasons of an endpoint. */
export type RefusalReason<E extends InternalEndpointDef> = keyof E['refusals'] & string;

const NAME = /^_[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** Builds a registry row with its types inferred; a malformed name fails at import. */
export function defineInternalEndpoint<Req extends z.ZodType, Rep extends z.ZodType, R extends string = never>(
  def: InternalEndpointDef<Req, Rep, R>,
): InternalEndpointDef<Req, Rep, R> {
  if (!NAME.test(def.name)) throw new Error(`internal endpoint name "${def.name}" is not _<area>.<verb>`);
  return Object.freeze({ ...def });
}

/**
 * The refusal `reason` of `endpoint` as a ServiceError: the declared code,
 * `retryable` as declared, and the reason, which travels in the error reply.
 * `message` is for people and logs; callers act on the reason.
 */
export function refuse<E extends InternalEndpointDef>(
  endpoint: E,
  reason: RefusalReason<E>,
  message: string,
  options: { readonly cause?: unknown } = {},
): ServiceError {
  const declared = endpoint.refusals[reason];
  // Only reachable past the type checker (a reason from data): a bug of the thrower.
  if (declared === undefined) throw new Error(`${endpoint.name} declares no refusal "${reason}"`);
  return new ServiceError(declared.code, message, {
    reason,
    ...(declared.retryable === undefined ? {} : { retryable: declared.retryable }),
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/** The declared refusal reason `error` carries for `endpoint`, or undefined for any other failure. */
export function refusalOf<E extends InternalEndpointDef>(endpoint: E, error: unknown): RefusalReason<E> | undefined {
  if (!isServiceError(error) || error.reason === undefined) return undefined;
  return Object.hasOwn(endpoint.refusals, error.reason) ? (error.reason as RefusalReason<E>) : undefined;
}

/**
 * The body parsed with the endpoint's request schema; an empty body reads as
 * `{}`. A body that fails it is 400 `invalid_request` naming the first bad
 * path: what the owner answers, and what the typed client throws before
 * sending.
 */
export function parseInternalRequest<E extends InternalEndpointDef>(
  endpoint: E,
  body: unknown,
): InternalParsedRequest<E> {
  const parsed = endpoint.request.safeParse(body ?? {});
  if (!parsed.success) {
    throw new ServiceError('invalid_request', `invalid ${endpoint.name} request: ${describeFirstIssue(parsed.error)}`);
  }
  return parsed.data as InternalParsedRequest<E>;
}

/**
 * The reply parsed with the endpoint's reply schema. A reply that fails it
 * (another version of the owner, a bug) is `internal`, never a throw of
 * another type: the caller cannot act on what it cannot read.
 */
export function parseInternalReply<E extends InternalEndpointDef>(endpoint: E, reply: unknown): InternalReply<E> {
  const parsed = endpoint.reply.safeParse(reply);
  if (!parsed.success) {
    throw new ServiceError(
      'internal',
      `malformed ${endpoint.name} reply from ${endpoint.service}: ${describeFirstIssue(parsed.error)}`,
      { cause: parsed.error },
    );
  }
  return parsed.data as InternalReply<E>;
}

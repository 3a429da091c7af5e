/**
 * @ars/contracts: the wire contract of the Agent Run Service. The method
 * registry (126), the event registry (146), zod schemas, error codes, limits
 * and the protocol version; emits OpenAPI 3.1 and JSON Schema.
 */
export { PROTOCOL_VERSION, parseSemver, isCompatibleVersion, DEPRECATIONS } from './version.ts';
export type { DeprecationNotice } from './version.ts';
export { ERROR_CODES, ServiceError, isServiceError, isErrorCode, toServiceError } from './errors.ts';
export type { ErrorCode, ErrorEnvelope } from './errors.ts';
export { CONTROL_PAYLOAD_LIMITS, checkPayloadBounds } from './limits.ts';
export type { PayloadBoundViolation } from './limits.ts';
export { IdentityScope, IdentityQuad, IdentityTriple, SCOPES, STEERING_TIERS } from './identity.ts';
export type { Scope, SteeringTier, VerifiedIdentity } from './identity.ts';
export { SERVICE_NAMES, defineMethod } from './method-def.ts';
export type { ServiceName, AuthClass, CrossingClaim, IdentityCrossing, RouteSurface, MethodDef } from './method-def.ts';
export { defineEvent } from './event-def.ts';
export type { EventClass, EventDef, EventFrame } from './event-def.ts';

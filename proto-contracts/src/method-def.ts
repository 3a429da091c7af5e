import type { z } from 'zod';
import type { Scope, SteeringTier } from './identity.ts';

/** The services that own methods. Each registers under this name on NATS. */
export const SERVICE_NAMES = [
  'gateway',
  'run-executor',
  'session',
  'artifact',
  'memory',
  'governance',
  'agent-registry',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * Auth legend: R read-only; M mutating; A requires the verified `admin` claim;
 * X cross-tenant fan-in with `admin` or `console:fleet`; XA cross-tenant
 * fan-in with `admin` only.
 */
export type AuthClass = 'R' | 'M' | 'A' | 'X' | 'XA';

/**
 * Who may make a body identity component differ from the verified one:
 * `admin`, `admin_or_fleet`, or `never` (the surface is cross-tenant guarded,
 * refused for everyone: 403 `scope_mismatch`).
 */
export type CrossingClaim = 'admin' | 'admin_or_fleet' | 'never';

/** The cross-tenant surfaces table, per method. */
export interface IdentityCrossing {
  readonly tenant?: CrossingClaim;
  readonly user?: CrossingClaim;
  readonly session?: CrossingClaim;
  /** state.history and tasks.get answer a refused crossing with 404 `not_found`. */
  readonly refusal?: 'not_found';
}

/** Families of the route rule: `control` routes keep the dotted name. */
export type RouteSurface = 'control' | 'family';

/** One row of the canonical registry of 126 methods. */
export interface MethodDef<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** The dotted method name, exactly as the spec writes it. */
  readonly name: string;
  /** The heading the spec lists the method under (start, steering, tasks, …). */
  readonly family: string;
  /** HTTP verb; every method is POST except events.subscribe. */
  readonly httpMethod: 'POST' | 'GET';
  /** Every route the gateway serves for it; the first is canonical. */
  readonly routes: readonly string[];
  /** `control`: the response carries `protocol_version`. */
  readonly surface: RouteSurface;
  /** The owning service. */
  readonly service: ServiceName;
  readonly auth: readonly AuthClass[];
  /** Body identity components that may differ from the verified identity. */
  readonly crossing?: IdentityCrossing;
  /** sessions.delete: no admin path; any differing component is identity_required. */
  readonly ownIdentityOnly?: boolean;
  /** Steering controls: the minimum steering tier. */
  readonly steering?: SteeringTier;
  /**
   * A verified claim the call needs besides the auth classes: `agent_config:user`
   * for the per-user variant tier of agent_config (admin does not satisfy it).
   */
  readonly requiredScope?: Scope;
  /** Request and response names as the spec spells them (for OpenAPI). */
  readonly requestName: string;
  readonly responseName: string;
  readonly request: Req;
  readonly response: Res;
  readonly summary: string;
}

/** Builds a registry row with its types inferred. */
export function defineMethod<Req extends z.ZodType, Res extends z.ZodType>(
  def: MethodDef<Req, Res>,
): MethodDef<Req, Res> {
  return def;
}

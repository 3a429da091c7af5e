import type { MethodDef } from '../method-def.ts';

/** The members of a registry row that the route rule decides. */
export type Routing = Pick<MethodDef, 'httpMethod' | 'routes' | 'surface'>;

/** Prefix of control-surface routes; the dotted method name follows verbatim. */
export const CONTROL_ROUTE_PREFIX = '/v1/control/';

/** `/v1/control/<dotted name>`: the control-surface route of a method. */
export function controlRoute(name: string): string {
  return `${CONTROL_ROUTE_PREFIX}${name}`;
}

/** `/v1/<family>/<name>`: the dotted name mapped to path segments. */
export function familyRoute(name: string): string {
  return `/v1/${name.replaceAll('.', '/')}`;
}

/** A control-surface method: POST `/v1/control/<dotted>`; responses carry `protocol_version`. */
export function onControl(name: string): Routing {
  return { httpMethod: 'POST', routes: [controlRoute(name)], surface: 'control' };
}

/** A family method: POST `/v1/<family>/<name>`. */
export function onFamily(name: string): Routing {
  return { httpMethod: 'POST', routes: [familyRoute(name)], surface: 'family' };
}

/**
 * A method for which the spec shows no route (tasks.get, tasks.list,
 * pause.list, sessions.*): served on both, `/v1/control/<dotted>` canonical.
 */
export function onBoth(name: string): Routing {
  return { httpMethod: 'POST', routes: [controlRoute(name), familyRoute(name)], surface: 'control' };
}

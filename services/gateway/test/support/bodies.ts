import { getMethod } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import { minimalBody } from '@ars/testkit';

/** The registry row of `name`; throws for a name outside the registry. */
export function method(name: string): MethodDef {
  const def = getMethod(name);
  if (def === undefined) throw new Error(`${name} is not in the registry`);
  return def;
}

/** The canonical route of `name`. */
export function routeOf(name: string): string {
  const route = method(name).routes[0];
  if (route === undefined) throw new Error(`${name} has no route`);
  return route;
}

/** A minimal valid body of `name` with `identity` members and `extra` members merged in. */
export function bodyFor(
  name: string,
  identity: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const { body } = minimalBody(method(name));
  return { ...body, ...extra, identity: { ...(body.identity as Record<string, string>), ...identity } };
}

import type { MethodDef, ServiceName } from '../method-def.ts';
import { AGENT_CONFIG_ADMIN_METHODS } from './agent-config.ts';
import { AGENT_CONFIG_TIER_METHODS } from './agent-config-tiers.ts';
import { AGENT_METHODS } from './agents.ts';
import { ARTIFACT_METHODS } from './artifacts.ts';
import { EVENT_METHODS } from './events.ts';
import { FLOW_METHODS } from './flows.ts';
import { MCP_METHODS } from './mcp.ts';
import { MEMORY_METHODS } from './memory.ts';
import { POSTURE_METHODS } from './posture.ts';
import { RUNS_STATE_AUTH_GOVERNANCE_METHODS } from './runs-state-auth-governance.ts';
import { SEARCH_METHODS } from './search.ts';
import { SESSION_METHODS } from './sessions.ts';
import { START_AND_STEERING_METHODS } from './start-steering.ts';
import { TASK_METHODS } from './tasks.ts';
import { TOOL_METHODS } from './tools.ts';
import { TOPOLOGY_METHODS } from './topology.ts';

/** The canonical registry: all 126 methods, in the spec's order of families. */
export const METHODS: readonly MethodDef[] = Object.freeze([
  ...START_AND_STEERING_METHODS,
  ...TASK_METHODS,
  ...EVENT_METHODS,
  ...SESSION_METHODS,
  ...SEARCH_METHODS,
  ...POSTURE_METHODS,
  ...TOPOLOGY_METHODS,
  ...ARTIFACT_METHODS,
  ...MEMORY_METHODS,
  ...TOOL_METHODS,
  ...FLOW_METHODS,
  ...AGENT_METHODS,
  ...MCP_METHODS,
  ...RUNS_STATE_AUTH_GOVERNANCE_METHODS,
  ...AGENT_CONFIG_ADMIN_METHODS,
  ...AGENT_CONFIG_TIER_METHODS,
]);

function indexBy(key: (m: MethodDef) => readonly string[], what: string): ReadonlyMap<string, MethodDef> {
  const map = new Map<string, MethodDef>();
  for (const method of METHODS) {
    for (const k of key(method)) {
      // A duplicate is a registry bug: fail at import rather than route ambiguously.
      if (map.has(k)) throw new Error(`duplicate ${what} in the method registry: ${k}`);
      map.set(k, method);
    }
  }
  return map;
}

const BY_NAME = indexBy((m) => [m.name], 'method name');
const BY_ROUTE = indexBy((m) => m.routes, 'route');

/** The registry row of a method name; `undefined` outside the registry (404 `unknown_method`). */
export function getMethod(name: string): MethodDef | undefined {
  return BY_NAME.get(name);
}

/**
 * The registry row served at an HTTP path (exact match over every route,
 * canonical and alias); `undefined` when no method is served there.
 */
export function findRoute(path: string): MethodDef | undefined {
  return BY_ROUTE.get(path);
}

/** The methods a service owns, in registry order. */
export function methodsOfService(service: ServiceName): readonly MethodDef[] {
  return METHODS.filter((m) => m.service === service);
}

import type { ServiceName } from '../method-def.ts';
import type { InternalEndpointDef } from '../internal-def.ts';
import { AGENT_EFFECTIVE_CONFIG, AGENT_ERASE_SESSION, AGENT_RESOLVE } from './agent.ts';
import {
  ARTIFACT_DOWNLOAD_BEGIN,
  ARTIFACT_ERASE_SESSION,
  ARTIFACT_RESOLVE,
  ARTIFACT_UPLOAD_ABORT,
  ARTIFACT_UPLOAD_BEGIN,
} from './artifact.ts';
import {
  GOVERNANCE_ADMIT_LLM_CALL,
  GOVERNANCE_EFFECTIVE_OVERRIDES,
  GOVERNANCE_FAILOVER,
  GOVERNANCE_OPEN_SECRET,
  GOVERNANCE_PROVIDER_KEY,
  GOVERNANCE_ADMISSION_POSTURE,
  GOVERNANCE_RECORD_COST,
  GOVERNANCE_RECORD_COSTS,
  GOVERNANCE_RECORD_TOKEN_ROTATION,
  GOVERNANCE_SEAL_SECRET,
} from './governance.ts';
import { MEMORY_CALLER_READ, MEMORY_CALLER_WRITE, MEMORY_ERASE_SESSION, MEMORY_PROMPT_BLOCKS } from './memory.ts';
import {
  GOVERNANCE_TENANT_BUDGET,
  MEMORY_TENANT_USAGE,
  TASKS_AGENT_METRICS,
  TASKS_AGENT_OUTCOMES,
  TASKS_AGENT_RUNS,
} from './fleet.ts';
import { SESSION_ADMIT } from './session.ts';
import { TASKS_ERASE_SESSION } from './tasks.ts';
import { OAUTH_BEGIN, OAUTH_COMPLETE } from './oauth.ts';
import { MCP_CALL_TOOL, MCP_CANCEL_CALL, TOOLS_CATALOGUE, TOOLS_RECORD_CALLS } from './tools.ts';

/**
 * The internal endpoint registry: every service-to-service call, by owner.
 * Each owner serves exactly its rows (service-kit refuses to boot
 * otherwise); callers reach them through the typed client of `@ars/bus`.
 */
export const INTERNAL_ENDPOINTS: readonly InternalEndpointDef[] = Object.freeze([
  ARTIFACT_UPLOAD_BEGIN,
  ARTIFACT_UPLOAD_ABORT,
  ARTIFACT_RESOLVE,
  ARTIFACT_ERASE_SESSION,
  ARTIFACT_DOWNLOAD_BEGIN,
  AGENT_RESOLVE,
  AGENT_EFFECTIVE_CONFIG,
  AGENT_ERASE_SESSION,
  SESSION_ADMIT,
  GOVERNANCE_PROVIDER_KEY,
  GOVERNANCE_RECORD_COST,
  GOVERNANCE_RECORD_COSTS,
  GOVERNANCE_ADMIT_LLM_CALL,
  GOVERNANCE_ADMISSION_POSTURE,
  GOVERNANCE_EFFECTIVE_OVERRIDES,
  GOVERNANCE_FAILOVER,
  GOVERNANCE_RECORD_TOKEN_ROTATION,
  GOVERNANCE_SEAL_SECRET,
  GOVERNANCE_OPEN_SECRET,
  TASKS_ERASE_SESSION,
  MEMORY_PROMPT_BLOCKS,
  MEMORY_ERASE_SESSION,
  MEMORY_CALLER_WRITE,
  MEMORY_CALLER_READ,
  TOOLS_CATALOGUE,
  MCP_CALL_TOOL,
  MCP_CANCEL_CALL,
  TOOLS_RECORD_CALLS,
  OAUTH_BEGIN,
  OAUTH_COMPLETE,
  TASKS_AGENT_RUNS,
  TASKS_AGENT_METRICS,
  TASKS_AGENT_OUTCOMES,
  MEMORY_TENANT_USAGE,
  GOVERNANCE_TENANT_BUDGET,
]);

const BY_NAME: ReadonlyMap<string, InternalEndpointDef> = (() => {
  const map = new Map<string, InternalEndpointDef>();
  for (const endpoint of INTERNAL_ENDPOINTS) {
    // A duplicate is a registry bug: fail at import rather than serve ambiguously.
    if (map.has(endpoint.name)) throw new Error(`duplicate internal endpoint: ${endpoint.name}`);
    map.set(endpoint.name, endpoint);
  }
  return map;
})();

/** The registry row of an internal endpoint name; `undefined` outside the registry. */
export function getInternalEndpoint(name: string): InternalEndpointDef | undefined {
  return BY_NAME.get(name);
}

/** The internal endpoints a service owns (and must serve), in registry order. */
export function internalEndpointsOfService(service: ServiceName): readonly InternalEndpointDef[] {
  return INTERNAL_ENDPOINTS.filter((endpoint) => endpoint.service === service);
}

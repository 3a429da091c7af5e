import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuse, TOOLS_CATALOGUE } from '@ars/contracts';
import type { CatalogueTool, VerifiedIdentity } from '@ars/contracts';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { defineService } from '@ars/service-kit';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { AgentRegistryConfig } from '../../../src/config.ts';
import type { AgentMcpTools, ToolHost } from '../../../src/mcp/index.ts';
import { createToolsModule } from '../../../src/tools/index.ts';

/**
 * The tool catalogue served over NATS by a spawned nats-server, in front of
 * an MCP host that answers what the test says each tenant's agents have:
 * the catalogue's own behaviour, apart from live MCP connections.
 */
export interface ToolsHarness {
  readonly service: InProcessService;
  /** A caller of a fresh tenant (unless named). */
  caller(scopes?: string[], tenant?: string): VerifiedIdentity;
  /** Sets the MCP tools of `tenant`'s agents as the host lists them. */
  setAgents(tenant: string, agents: AgentMcpTools[]): void;
  /** How many times the host was asked for a tenant's tools. */
  readonly hostCalls: { tenant: number; agent: number };
  call<T = Record<string, unknown>>(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<T>;
  outcome(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<CallOutcome>;
  /** Calls an internal endpoint by name, the body as given (no client-side check). */
  internal(name: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<CallOutcome>;
  stop(): Promise<void>;
}

/** An MCP tool as the host lists it. */
export function hostTool(server: string, tool: string, over: Partial<CatalogueTool> = {}): CatalogueTool {
  return {
    name: `${server}__${tool}`,
    server_id: server,
    server_tool: tool,
    transport: 'stdio',
    description: `The ${tool} tool of ${server}.`,
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
    side_effect: 'unsafe',
    approval_policy: { mode: 'never', on_timeout: 'reject' },
    tags: ['mcp'],
    ...over,
  };
}

export async function startToolsHarness(name: string): Promise<ToolsHarness> {
  const agentsByTenant = new Map<string, AgentMcpTools[]>();
  const hostCalls = { tenant: 0, agent: 0 };
  const host: Pick<ToolHost, 'listTenantMcpTools' | 'listAgentMcpTools'> = {
    listTenantMcpTools: async (_identity, tenant) => {
      hostCalls.tenant += 1;
      return { agents: agentsByTenant.get(tenant) ?? [] };
    },
    listAgentMcpTools: async (identity, agentId = 'default') => {
      hostCalls.agent += 1;
      const agent = (agentsByTenant.get(identity.tenant) ?? []).find((a) => a.agent_id === agentId);
      if (agent !== undefined) return agent;
      if (agentId === 'default') return { agent_id: agentId, tools: [], unavailable_servers: [] };
      throw refuse(TOOLS_CATALOGUE, 'unknown_agent', `agent_id ${agentId} names no agent configuration`);
    },
  };
  const definition = defineService({
    name: 'agent-registry',
    version: '0.1.0',
    config: AgentRegistryConfig,
    build: async ({ store }) => createToolsModule({ store, host }),
  });
  const storeDir = await mkdtemp(join(tmpdir(), `ars-tools-${name}-`));
  let nats: NatsServerHandle | undefined;
  try {
    nats = await startNatsServer({ storeDir });
    const service = await startInProcess(definition, { natsUrl: nats.url });
    const started = nats;
    const call = <T>(method: string, body: Record<string, unknown>, who: VerifiedIdentity) =>
      service.call(method, { identity: {}, ...body }, who) as Promise<T>;
    return {
      service,
      hostCalls,
      caller: (scopes = ['admin'], tenant = `t-${randomUUID()}`) => ({ tenant, user: 'alice', session: 's-1', scopes }),
      setAgents: (tenant, agents) => agentsByTenant.set(tenant, agents),
      call,
      outcome: (method, body, who) => outcomeOf(call(method, body, who)),
      internal: (endpoint, body, who) => outcomeOf(service.rpc.call('agent-registry', endpoint, who, body)),
      stop: async () => {
        await service.stop();
        await started.stop();
        await rm(storeDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
}

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import type { AgentConfigContent, VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher, PublishEventInput } from '@ars/bus';
import { contentHash } from '@ars/service-kit';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { createConnectionPool } from '../../src/mcp/pool.ts';
import { createToolHost } from '../../src/mcp/tool-host.ts';
import type { ToolHost } from '../../src/mcp/tool-host.ts';
import { createRetirementRepository } from '../../src/store/retirement.repository.ts';
import { createRevisionRepository } from '../../src/store/revision.repository.ts';
import type { RevisionRepository } from '../../src/store/revision.repository.ts';
import { createSessionSettingsRepository } from '../../src/store/session-settings.repository.ts';
import type { SessionSettingsRepository } from '../../src/store/session-settings.repository.ts';
import { EVERYTHING_BIN, faulty } from './support.ts';

/** The tool host's catalogue part, built in-process over an in-memory store and real MCP servers. */
describe('ToolHost.listAgentMcpTools', () => {
  let store: Store;
  let revisions: RevisionRepository;
  let variants: RevisionRepository;
  let sessionSettings: SessionSettingsRepository;
  let host: ToolHost;
  const published: PublishEventInput[] = [];

  beforeAll(async () => {
    store = await openStore({ dataDir: '/nonexistent', database: 'mcp_tool_host', inMemory: true, engine: 'nedb' });
    revisions = await createRevisionRepository(store);
    variants = await createRevisionRepository(store, { collection: 'agent_config_user_revisions', perUser: true });
    sessionSettings = await createSessionSettingsRepository(store);
    const publisher: EventPublisher = {
      publish: async (input) => {
        published.push(input);
        return { sequence: published.length, eventId: randomUUID() } as never;
      },
    };
    const logger = createLogger({ name: 'mcp-tool-host-test', level: 'silent' });
    const pool = createConnectionPool({
      settings: {
        connectTimeoutMs: 10_000,
        backoffMs: 50,
        backoffMaxMs: 400,
        stdioMaxMessageBytes: 16 * 1024 * 1024,
        resultMaxBytes: () => 4 * 1024 * 1024,
      },
      idleCloseMs: 0,
      publisher,
      logger,
    });
    host = createToolHost({
      revisions,
      retirements: createRetirementRepository(store),
      defaultAgentId: 'default',
      variants,
      sessionSettings,
      pool,
    });
  });

  afterAll(async () => {
    await host?.close();
    await store?.close();
  });

  const caller = (): VerifiedIdentity => ({ tenant: `t-${randomUUID()}`, user: 'alice', session: 's-1', scopes: [] });
  const author = (who: VerifiedIdentity) => ({ tenant: who.tenant, user: who.user, session: who.session, run: '' });

  async function configure(who: VerifiedIdentity, agentId: string, config: AgentConfigContent, user?: string) {
    const repository = user === undefined ? revisions : variants;
    await repository.append({
      tenant: who.tenant,
      agent_id: agentId,
      ...(user === undefined ? {} : { user }),
      content_hash: contentHash(config),
      author: author(who),
      config,
    });
  }

  it('lists every valid tool of the servers with side effect, policy and schema, and the servers it could not reach', async () => {
    const who = caller();
    await configure(who, 'a', {
      mcp_connections: [
        { ...faulty('f'), transport: 'stdio', approval_policy: { mode: 'always', on_timeout: 'approve' } },
        { server_id: 'everything', transport: 'stdio', command: EVERYTHING_BIN, args: ['stdio'] },
        { server_id: 'broken', transport: 'stdio', command: '/nonexistent/mcp-server' },
      ],
    } as AgentConfigContent);
    const listed = await host.listAgentMcpTools(who, 'a');
    const byName = new Map(listed.tools.map((t) => [t.name, t]));
    expect(byName.get('f__echo')).toMatchObject({
      server_id: 'f',
      server_tool: 'echo',
      transport: 'stdio',
      description: 'Echoes its text.',
      side_effect: 'read_only',
      approval_policy: { mode: 'always', on_timeout: 'approve' },
      input_schema: expect.objectContaining({ type: 'object' }),
      tags: ['mcp'],
    });
    expect(byName.get('f__slow')?.side_effect).toBe('idempotent');
    expect(byName.get('f__crash')?.side_effect).toBe('unsafe');
    expect(byName.get('everything__echo')).toMatchObject({
      approval_policy: { mode: 'never' },
      side_effect: 'read_only',
    });
    expect(byName.get('everything__toggle-subscriber-updates')?.side_effect).toBe('unsafe');
    // Names that are not valid function names are left out.
    expect([...byName.keys()].filter((n) => n.includes('.') || n.length > 64)).toEqual([]);
    expect(listed.unavailable_servers).toEqual([{ server_id: 'broken', state: 'failed', reason: expect.any(String) }]);
    const pending = published.find((e) => e.type === 'mcp.connection.pending' && e.identity.tenant === who.tenant);
    expect(pending?.payload).toMatchObject({ AgentID: 'a', State: 'pending', Author: author(who) });
  });

  it("uses the caller's variant and the session's source disables, as the effective configuration does", async () => {
    const who = caller();
    await configure(who, 'a', { mcp_connections: [faulty('f'), faulty('g')] } as AgentConfigContent);
    await configure(who, 'a', { mcp_connections: [faulty('v')] } as AgentConfigContent, 'bob');
    const servers = async (identity: VerifiedIdentity) =>
      [...new Set((await host.listAgentMcpTools(identity, 'a')).tools.map((t) => t.server_id))].sort();
    expect(await servers(who)).toEqual(['f', 'g']);
    expect(await servers({ ...who, user: 'bob' })).toEqual(['v']);
    await sessionSettings.setSourceDisables({ tenant: who.tenant, user: 'alice', session: 's-2' }, ['g']);
    expect(await servers({ ...who, session: 's-2' })).toEqual(['f']);
  });

  it('refuses an agent the tenant cannot start unknown_agent', async () => {
    const error = await host.listAgentMcpTools(caller(), 'ghost').catch((e: unknown) => e);
    expect(isServiceError(error) && error.reason).toBe('unknown_agent');
  });

  it('answers no tools for the default agent without a revision', async () => {
    await expect(host.listAgentMcpTools(caller())).resolves.toEqual({
      agent_id: 'default',
      tools: [],
      unavailable_servers: [],
      auth_required: [],
    });
  });

  it('lists the tools of every agent of a tenant', async () => {
    const who = caller();
    await configure(who, 'a', { mcp_connections: [faulty('f')] } as AgentConfigContent);
    await configure(who, 'b', { mcp_connections: [faulty('g')] } as AgentConfigContent);
    await configure(who, 'c', {} as AgentConfigContent);
    const tenant = await host.listTenantMcpTools(who, who.tenant);
    expect(
      tenant.agents.map((a) => [a.agent_id, a.tools.some((t) => t.name === `${a.agent_id === 'a' ? 'f' : 'g'}__echo`)]),
    ).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });
});

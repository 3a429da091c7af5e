import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Revision {
  agent_id: string;
  revision_id: string;
  parent_revision_id?: string;
  content_hash: string;
  author: { tenant: string; user: string; session: string; run: string };
  config: Record<string, unknown>;
}

const GH = { server_id: 'gh', transport: 'streamable_http', url: 'https://mcp.example.com/mcp' };
const GITHUB = {
  provider_name: 'github',
  credential_broker: 'vault://oauth/github',
  client_id: 'abc',
  scopes: ['repo'],
};

describe('agent_config MCP and OAuth setters', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('mcp-oauth');
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function set(method: string, admin: VerifiedIdentity, body: Record<string, unknown>): Promise<Revision> {
    return (await h.call<{ revision: Revision }>(method, { agent_id: 'helper', ...body }, admin)).revision;
  }

  const authorOf = (c: VerifiedIdentity) => ({ tenant: c.tenant, user: c.user, session: c.session, run: '' });

  describe('MCP connections', () => {
    it('adds a connection and publishes mcp.connection.added with the spec keys', async () => {
      const admin = h.caller();
      const revision = await set('agent_config.add_mcp_connection', admin, { connection: GH });
      expect(revision.config).toEqual({ mcp_connections: [GH] });
      const [frame] = await h.events(admin.tenant, 'mcp.connection.added');
      expect(payloadKeys(frame)).toEqual([
        'AgentID',
        'Author',
        'OccurredAt',
        'PauseToken',
        'Reason',
        'RevisionID',
        'ServerID',
        'State',
        'Transport',
      ]);
      expect(frame?.payload).toMatchObject({
        Author: authorOf(admin),
        AgentID: 'helper',
        ServerID: 'gh',
        Transport: 'streamable_http',
        State: 'configured',
        RevisionID: revision.revision_id,
        PauseToken: '',
        Reason: '',
      });
    });

    it('refuses a second connection with the same server id as a conflict', async () => {
      const admin = h.caller();
      await set('agent_config.add_mcp_connection', admin, { connection: GH });
      expect(
        await h.outcome('agent_config.add_mcp_connection', { agent_id: 'helper', connection: GH }, admin),
      ).toMatchObject({
        ok: false,
        code: 'conflict',
      });
    });

    it.each([
      ['a stdio connection without a command', { server_id: 's', transport: 'stdio' }],
      ['an http connection without a url', { server_id: 's', transport: 'sse' }],
      ['an unknown transport', { server_id: 's', transport: 'carrier-pigeon', url: 'https://x.example.com' }],
      ['an OAuth provider that is not installed', { ...GH, oauth_provider: 'nope' }],
    ])('refuses %s with invalid_request', async (_what, connection) => {
      expect(
        await h.outcome('agent_config.add_mcp_connection', { agent_id: 'helper', connection }, h.caller()),
      ).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });

    it('removes a connection and publishes mcp.connection.removed with the spec keys', async () => {
      const admin = h.caller();
      await set('agent_config.add_mcp_connection', admin, { connection: GH });
      const revision = await set('agent_config.remove_mcp_connection', admin, { server_id: 'gh' });
      expect(revision.config).toEqual({ mcp_connections: [] });
      const [frame] = await h.events(admin.tenant, 'mcp.connection.removed');
      expect(payloadKeys(frame)).toEqual(['AgentID', 'Author', 'OccurredAt', 'RevisionID', 'ServerID']);
      expect(frame?.payload).toMatchObject({ AgentID: 'helper', ServerID: 'gh', RevisionID: revision.revision_id });
    });

    it('answers not_found for removing a connection that is not there', async () => {
      expect(
        await h.outcome('agent_config.remove_mcp_connection', { agent_id: 'helper', server_id: 'x' }, h.caller()),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
    });

    it('sets discovery origins and publishes what was granted and revoked', async () => {
      const admin = h.caller();
      await set('agent_config.set_mcp_discovery_origins', admin, {
        origins: ['https://a.example.com', 'https://b.example.com'],
      });
      const revision = await set('agent_config.set_mcp_discovery_origins', admin, {
        origins: ['https://b.example.com/', 'https://c.example.com:8443'],
      });
      expect(revision.config.mcp_discovery_origins).toEqual(['https://b.example.com', 'https://c.example.com:8443']);
      const frames = await h.events(admin.tenant, 'mcp.connection.discovery_origins_set');
      expect(frames).toHaveLength(2);
      expect(payloadKeys(frames[1])).toEqual([
        'AgentID',
        'Author',
        'Granted',
        'OccurredAt',
        'RevisionID',
        'Revoked',
        'ServerID',
      ]);
      expect(frames[0]?.payload).toMatchObject({
        Granted: ['https://a.example.com', 'https://b.example.com'],
        Revoked: [],
      });
      expect(frames[1]?.payload).toMatchObject({
        AgentID: 'helper',
        ServerID: '',
        RevisionID: revision.revision_id,
        Granted: ['https://c.example.com:8443'],
        Revoked: ['https://a.example.com'],
      });
    });

    it('refuses a discovery origin with a path with invalid_request', async () => {
      expect(
        await h.outcome(
          'agent_config.set_mcp_discovery_origins',
          { agent_id: 'helper', origins: ['https://a.example.com/x'] },
          h.caller(),
        ),
      ).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('OAuth', () => {
    it('installs a provider and publishes agent_config.oauth_provider.installed with the spec keys', async () => {
      const admin = h.caller();
      const revision = await set('agent_config.set_oauth_provider', admin, { provider: GITHUB });
      expect(revision.config).toEqual({ oauth_providers: [GITHUB] });
      const [frame] = await h.events(admin.tenant, 'agent_config.oauth_provider.installed');
      expect(payloadKeys(frame)).toEqual([
        'AgentID',
        'Author',
        'CredentialBroker',
        'OccurredAt',
        'ProviderName',
        'RevisionID',
      ]);
      expect(frame?.payload).toMatchObject({
        Author: authorOf(admin),
        AgentID: 'helper',
        ProviderName: 'github',
        CredentialBroker: 'vault://oauth/github',
        RevisionID: revision.revision_id,
      });
    });

    it('removes a provider and publishes agent_config.oauth_provider.removed with its broker', async () => {
      const admin = h.caller();
      await set('agent_config.set_oauth_provider', admin, { provider: GITHUB });
      const revision = await set('agent_config.remove_oauth_provider', admin, { provider_name: 'github' });
      expect(revision.config).toEqual({ oauth_providers: [] });
      const [frame] = await h.events(admin.tenant, 'agent_config.oauth_provider.removed');
      expect(payloadKeys(frame)).toEqual([
        'AgentID',
        'Author',
        'CredentialBroker',
        'OccurredAt',
        'ProviderName',
        'RevisionID',
      ]);
      expect(frame?.payload).toMatchObject({
        ProviderName: 'github',
        CredentialBroker: 'vault://oauth/github',
        RevisionID: revision.revision_id,
      });
    });

    it('binds an MCP server to a provider and unbinds it', async () => {
      const admin = h.caller();
      await set('agent_config.set_oauth_provider', admin, { provider: GITHUB });
      await set('agent_config.add_mcp_connection', admin, { connection: { ...GH, oauth_provider: 'github' } });
      const bound = await set('agent_config.register_oauth_mcp_capability', admin, {
        capability: { server_id: 'gh', provider_name: 'github', scopes: ['repo'] },
      });
      expect(bound.config.oauth_mcp_capabilities).toEqual([
        { server_id: 'gh', provider_name: 'github', scopes: ['repo'] },
      ]);
      expect(
        await h.outcome('agent_config.remove_oauth_provider', { agent_id: 'helper', provider_name: 'github' }, admin),
      ).toMatchObject({
        ok: false,
        code: 'conflict',
      });
      const unbound = await set('agent_config.remove_oauth_mcp_capability', admin, {
        server_id: 'gh',
        provider_name: 'github',
      });
      expect(unbound.config.oauth_mcp_capabilities).toEqual([]);
      const revised = await h.events(admin.tenant, 'agent.config.revised');
      expect(revised.map((f) => (f.payload as { RevisionID: string }).RevisionID)).toContain(unbound.revision_id);
    });

    it('refuses a capability for a server the agent does not connect to', async () => {
      const admin = h.caller();
      await set('agent_config.set_oauth_provider', admin, { provider: GITHUB });
      expect(
        await h.outcome(
          'agent_config.register_oauth_mcp_capability',
          { agent_id: 'helper', capability: { server_id: 'nope', provider_name: 'github', scopes: [] } },
          admin,
        ),
      ).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it('answers not_found for removing what is not installed', async () => {
      const admin = h.caller();
      expect(
        await h.outcome('agent_config.remove_oauth_provider', { agent_id: 'helper', provider_name: 'x' }, admin),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(
        await h.outcome(
          'agent_config.remove_oauth_mcp_capability',
          { agent_id: 'helper', server_id: 's', provider_name: 'x' },
          admin,
        ),
      ).toMatchObject({ ok: false, code: 'not_found' });
    });
  });
});

import { describe, expect, it } from 'vitest';
import type { McpConnection } from '@ars/contracts';
import { allowedTools, egressOf } from '../../src/mcp/server-view.ts';
import { oauthOf } from '../../src/mcp/tool-host.ts';

const stdio: McpConnection = { server_id: 'fs', transport: 'stdio', command: 'mcp-fs', args: ['--root', '/data'] };
const http: McpConnection = {
  server_id: 'gh',
  transport: 'streamable_http',
  url: 'https://mcp.example.com:8443/mcp?x=1',
};

describe('mcp.servers.policy views', () => {
  it('names the command of a stdio server, never its arguments, and the host of an HTTP one', () => {
    expect(egressOf(stdio)).toEqual({ transport: 'stdio', kind: 'process', command: 'mcp-fs' });
    expect(egressOf(http)).toEqual({
      transport: 'streamable_http',
      kind: 'network',
      scheme: 'https',
      host: 'mcp.example.com:8443',
    });
  });

  it("applies the agent's tool exposure to the server's exposed tools", () => {
    const exposed = ['gh__a', 'gh__b', 'gh__c'];
    expect(allowedTools(exposed, undefined)).toEqual(exposed);
    expect(allowedTools(exposed, { mode: 'all', tools: [] })).toEqual(exposed);
    expect(allowedTools(exposed, { mode: 'allow_list', tools: ['gh__b', 'echo'] })).toEqual(['gh__b']);
    expect(allowedTools(exposed, { mode: 'deny_list', tools: ['gh__b'] })).toEqual(['gh__a', 'gh__c']);
  });
});

describe("a tool's OAuth provider and scopes", () => {
  const agent = {
    agent_id: 'a',
    revision_id: 'r',
    connections: [],
    oauth_providers: [{ provider_name: 'github', credential_broker: 'broker', scopes: ['read:user'] }],
    oauth_capabilities: [{ server_id: 'gh2', provider_name: 'github', scopes: ['repo', 'read:org'] }],
  };

  it("takes the agent's capability for the server first, else the connection's provider with its scopes", () => {
    expect(oauthOf(agent, { ...http, server_id: 'gh2' })).toEqual({
      provider_name: 'github',
      scopes: ['repo', 'read:org'],
    });
    expect(oauthOf(agent, { ...http, oauth_provider: 'github' })).toEqual({
      provider_name: 'github',
      scopes: ['read:user'],
    });
    expect(oauthOf(agent, { ...http, oauth_provider: 'gitlab' })).toEqual({ provider_name: 'gitlab', scopes: [] });
    expect(oauthOf(agent, http)).toBeUndefined();
  });
});

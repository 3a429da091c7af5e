import { describe, expect, it } from 'vitest';
import type { AgentConfigContent } from '@ars/contracts';
import {
  addMcpConnection,
  normaliseOrigins,
  originsChange,
  registerOAuthMcpCapability,
  removeMcpConnection,
  removeOAuthMcpCapability,
  removeOAuthProvider,
  setOAuthProvider,
} from '../../src/domain/config-setters.ts';

const BASE: AgentConfigContent = {
  mcp_connections: [
    { server_id: 'gh', transport: 'sse', url: 'https://mcp.example.com/sse', oauth_provider: 'github' },
  ],
  oauth_providers: [{ provider_name: 'github', credential_broker: 'vault' }],
  oauth_mcp_capabilities: [{ server_id: 'gh', provider_name: 'github', scopes: ['repo'] }],
};

describe('MCP connection edits', () => {
  it('adds a new server and refuses a second one with the same id as a conflict', () => {
    const next = addMcpConnection(BASE, { server_id: 'fs', transport: 'stdio', command: 'mcp-fs' });
    expect(next.mcp_connections?.map((c) => c.server_id)).toEqual(['gh', 'fs']);
    expect(() => addMcpConnection(BASE, { server_id: 'gh', transport: 'stdio', command: 'x' })).toThrowError(
      expect.objectContaining({ code: 'conflict' }),
    );
  });

  it('removes a connection with the capabilities bound to it', () => {
    const next = removeMcpConnection(BASE, 'gh');
    expect(next.mcp_connections).toEqual([]);
    expect(next.oauth_mcp_capabilities).toEqual([]);
    expect(() => removeMcpConnection(BASE, 'nope')).toThrowError(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('OAuth edits', () => {
  it('installs a provider or replaces one of the same name in place', () => {
    const added = setOAuthProvider(BASE, { provider_name: 'google', credential_broker: 'b2' });
    expect(added.oauth_providers?.map((p) => p.provider_name)).toEqual(['github', 'google']);
    const replaced = setOAuthProvider(BASE, { provider_name: 'github', credential_broker: 'other' });
    expect(replaced.oauth_providers).toEqual([{ provider_name: 'github', credential_broker: 'other' }]);
  });

  it('refuses to remove a provider still in use, and an unknown one', () => {
    expect(() => removeOAuthProvider(BASE, 'github')).toThrowError(expect.objectContaining({ code: 'conflict' }));
    expect(() => removeOAuthProvider(BASE, 'nope')).toThrowError(expect.objectContaining({ code: 'not_found' }));
    const unused = { ...BASE, mcp_connections: [], oauth_mcp_capabilities: [] };
    expect(removeOAuthProvider(unused, 'github').oauth_providers).toEqual([]);
  });

  it('registers a capability only for a known server and provider', () => {
    const next = registerOAuthMcpCapability(BASE, {
      server_id: 'gh',
      provider_name: 'github',
      scopes: ['repo', 'gist'],
    });
    expect(next.oauth_mcp_capabilities).toEqual([
      { server_id: 'gh', provider_name: 'github', scopes: ['repo', 'gist'] },
    ]);
    expect(() =>
      registerOAuthMcpCapability(BASE, { server_id: 'x', provider_name: 'github', scopes: [] }),
    ).toThrowError(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => registerOAuthMcpCapability(BASE, { server_id: 'gh', provider_name: 'x', scopes: [] })).toThrowError(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });

  it('removes a capability, and refuses one that is not there', () => {
    expect(removeOAuthMcpCapability(BASE, 'gh', 'github').oauth_mcp_capabilities).toEqual([]);
    expect(() => removeOAuthMcpCapability(BASE, 'gh', 'other')).toThrowError(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});

describe('discovery origins', () => {
  it('normalises, deduplicates and refuses what is not an origin', () => {
    expect(normaliseOrigins(['https://a.example.com/', 'https://a.example.com', 'http://b.example.com:81'])).toEqual([
      'https://a.example.com',
      'http://b.example.com:81',
    ]);
    expect(() => normaliseOrigins(['https://a.example.com/path'])).toThrowError(
      expect.objectContaining({ code: 'invalid_request', message: expect.stringContaining('origins.0') }),
    );
  });

  it('tells what a change grants and revokes', () => {
    expect(originsChange(['https://a', 'https://b'], ['https://b', 'https://c'])).toEqual({
      granted: ['https://c'],
      revoked: ['https://a'],
    });
  });
});

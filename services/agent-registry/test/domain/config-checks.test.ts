import { describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import type { AgentConfigContent } from '@ars/contracts';
import { checkConfig, normaliseOrigin } from '../../src/domain/config-checks.ts';
import { findCredential, looksLikeCredential } from '../../src/domain/credential-guard.ts';

function refusal(config: AgentConfigContent): string | undefined {
  try {
    checkConfig(config);
    return undefined;
  } catch (error) {
    if (!isServiceError(error)) throw error;
    expect(error.code).toBe('invalid_request');
    return error.message;
  }
}

describe('findCredential', () => {
  it.each([
    [
      'a URL with a password',
      { llm_provider: { provider_name: 'p', provider: 'openai', base_url: 'https://u:pw@llm.example.com/v1' } },
      '/llm_provider/base_url',
    ],
    [
      'a key in a query string',
      { mcp_connections: [{ server_id: 's', transport: 'sse', url: 'https://m.example.com/sse?api_key=abc123' }] },
      '/mcp_connections/0/url',
    ],
    [
      'an sk- key in an argument',
      { mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'x', args: ['sk-abcdefghijklmnopqrstuv'] }] },
      '/mcp_connections/0/args/0',
    ],
    [
      'the value after a --token flag',
      { mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'x', args: ['--token', 'plain'] }] },
      '/mcp_connections/0/args/1',
    ],
    [
      'a --client-secret=value argument',
      { mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'x', args: ['--client-secret=zzz'] }] },
      '/mcp_connections/0/args/0',
    ],
  ] as const)('finds %s by path', (_what, config, path) => {
    expect(findCredential(config as unknown as AgentConfigContent)).toBe(path);
  });

  it('leaves prompts, scripted turns and ordinary addresses alone', () => {
    const config = {
      prompt_layers: [{ name: 'p', text: 'password=hunter2 is a bad example' }],
      llm_provider: { provider_name: 'p', provider: 'scripted', script: [{ text: 'token=abc' }] },
      mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'npx', args: ['--name', 'Token Service'] }],
      oauth_providers: [
        {
          provider_name: 'gh',
          credential_broker: 'vault://oauth/gh',
          token_url: 'https://github.com/login/oauth/access_token',
        },
      ],
    };
    expect(findCredential(config)).toBeUndefined();
  });

  it('knows a bearer token from prose about bearer tokens', () => {
    expect(looksLikeCredential('Bearer abcdef0123456789abcdef')).toBe(true);
    expect(looksLikeCredential('Bearer tokens are supported')).toBe(false);
  });
});

describe('checkConfig', () => {
  it('accepts a coherent configuration', () => {
    expect(
      refusal({
        mcp_connections: [
          { server_id: 'gh', transport: 'streamable_http', url: 'https://mcp.example.com/', oauth_provider: 'github' },
        ],
        oauth_providers: [{ provider_name: 'github', credential_broker: 'broker' }],
        oauth_mcp_capabilities: [{ server_id: 'gh', provider_name: 'github', scopes: ['repo'] }],
        mcp_discovery_origins: ['https://mcp.example.com'],
      }),
    ).toBeUndefined();
  });

  it('names the credential path without echoing the value', () => {
    const message = refusal({
      llm_provider: { provider_name: 'p', provider: 'openai', base_url: 'https://u:s3cret@x.example.com' },
    });
    expect(message).toContain('config.llm_provider.base_url');
    expect(message).not.toContain('s3cret');
  });

  it.each([
    ['a stdio connection without a command', { mcp_connections: [{ server_id: 's', transport: 'stdio' }] }, 'command'],
    ['an sse connection without a url', { mcp_connections: [{ server_id: 's', transport: 'sse' }] }, 'url'],
    [
      'a duplicate server id',
      {
        mcp_connections: [
          { server_id: 's', transport: 'stdio', command: 'a' },
          { server_id: 's', transport: 'stdio', command: 'b' },
        ],
      },
      'twice',
    ],
    [
      'an unknown OAuth provider on a connection',
      { mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'a', oauth_provider: 'nope' }] },
      'oauth_provider',
    ],
    [
      'a capability of an unknown server',
      {
        oauth_providers: [{ provider_name: 'p', credential_broker: 'b' }],
        oauth_mcp_capabilities: [{ server_id: 'x', provider_name: 'p', scopes: [] }],
      },
      'server_id',
    ],
    ['a discovery origin with a path', { mcp_discovery_origins: ['https://mcp.example.com/path'] }, 'origin'],
  ] as const)('refuses %s', (_what, config, fragment) => {
    expect(refusal(config as unknown as AgentConfigContent)).toContain(fragment);
  });
});

describe('normaliseOrigin', () => {
  it('keeps scheme, host and port only', () => {
    expect(normaliseOrigin('https://MCP.example.com:8443/')).toBe('https://mcp.example.com:8443');
    expect(normaliseOrigin('https://mcp.example.com/x')).toBeUndefined();
    expect(normaliseOrigin('ftp://mcp.example.com')).toBeUndefined();
    expect(normaliseOrigin('not a url')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { McpConnection } from '@ars/contracts';
import { appliesTo, bindingIdOf, bindingSubject } from '../../src/oauth/binding-id.ts';

const owner = { tenant: 't', user: 'alice', session: 's-1' };
const spec = (binding_scope?: McpConnection['binding_scope']): McpConnection => ({
  server_id: 'gh',
  transport: 'streamable_http',
  url: 'https://mcp.example.com/mcp',
  ...(binding_scope === undefined ? {} : { binding_scope }),
});

describe('binding ids', () => {
  it("binds a connection without binding_scope to the run owner's user", () => {
    expect(bindingSubject(owner, 'helper', spec())).toEqual({
      tenant: 't',
      agent_id: 'helper',
      server_id: 'gh',
      binding_scope: 'user',
      user: 'alice',
      session: '',
    });
  });

  it('names no user for the tenant scope and the session for the session scope', () => {
    expect(bindingSubject(owner, 'helper', spec('tenant'))).toMatchObject({ user: '', session: '' });
    expect(bindingSubject(owner, 'helper', spec('session'))).toMatchObject({ user: 'alice', session: 's-1' });
  });

  it('gives one subject one stable id, and every other subject another', () => {
    const id = bindingIdOf(bindingSubject(owner, 'helper', spec()));
    expect(id).toMatch(/^mcpb_[A-Za-z0-9_-]{32}$/);
    expect(bindingIdOf(bindingSubject({ ...owner, session: 's-2' }, 'helper', spec()))).toBe(id);
    const others = [
      bindingSubject({ ...owner, user: 'bob' }, 'helper', spec()),
      bindingSubject({ ...owner, tenant: 'u' }, 'helper', spec()),
      bindingSubject(owner, 'other', spec()),
      bindingSubject(owner, 'helper', { ...spec(), server_id: 'gl' }),
      bindingSubject(owner, 'helper', spec('tenant')),
      bindingSubject(owner, 'helper', spec('session')),
    ];
    expect(new Set([id, ...others.map(bindingIdOf)]).size).toBe(others.length + 1);
  });

  it("applies a binding to the tenant's every user, a user's to that user, a session's to that session", () => {
    const alice = { user: 'alice', session: 's-1' };
    expect(appliesTo({ binding_scope: 'tenant', user: '', session: '' }, alice)).toBe(true);
    expect(appliesTo({ binding_scope: 'user', user: 'alice', session: '' }, alice)).toBe(true);
    expect(appliesTo({ binding_scope: 'user', user: 'bob', session: '' }, alice)).toBe(false);
    expect(appliesTo({ binding_scope: 'session', user: 'alice', session: 's-1' }, alice)).toBe(true);
    expect(appliesTo({ binding_scope: 'session', user: 'alice', session: 's-2' }, alice)).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '@ars/service-kit/testing';
import { startOAuthMcpServer } from '@ars/testkit';
import type { OAuthMcpServer, OAuthMcpServerOptions } from '@ars/testkit';
import { oauthAgent, resultOf, settle, startOAuthHarness } from './support.ts';
import type { OAuthHarness } from './support.ts';

interface Binding {
  binding_id: string;
  server_id: string;
  binding_scope: string;
  tenant: string;
  user?: string;
  state: string;
  scopes?: string[];
  expires_at?: string;
  refreshable?: boolean;
  updated_at?: string;
}

/** Grants at use: refresh, expiry, revocation, and the binding methods. */
describe('OAuth-bound MCP servers: grants', () => {
  let h: OAuthHarness;
  const servers: OAuthMcpServer[] = [];

  beforeAll(async () => {
    h = await startOAuthHarness();
  });
  afterAll(async () => {
    await h?.stop();
    await Promise.all(servers.map((s) => s.stop()));
  });

  async function serverWith(options: OAuthMcpServerOptions = {}) {
    const server = await startOAuthMcpServer(options);
    servers.push(server);
    return server;
  }

  /** alice (admin) and bob of a fresh tenant, both authorized on `server` as `gh` of `helper`. */
  async function authorizedPair(server: OAuthMcpServer) {
    const alice = h.caller('alice');
    const bob = h.caller('bob', alice.tenant, []);
    await h.configure(alice, 'helper', oauthAgent('gh', server.url));
    const bindingOf = async (who: typeof alice) => {
      const authorized = await h.authorize(who, { server_id: 'gh', agent_id: 'helper' });
      expect(authorized.completed).toMatchObject({ ok: true, result: { outcome: 'completed' } });
      return resultOf<{ binding_id: string }>(authorized.completed).binding_id;
    };
    return { alice, bob, aliceBinding: await bindingOf(alice), bobBinding: await bindingOf(bob) };
  }

  const list = async (who: ReturnType<OAuthHarness['caller']>, body: Record<string, unknown> = {}) =>
    h.call<{ items: Binding[]; next_cursor?: string }>('mcp.servers.bindings.list', body, who);

  describe('refresh', () => {
    it('refreshes a grant due to expire before it is used, and says so with tool.credential_exchanged', async () => {
      const server = await serverWith({ accessTokenTtlSeconds: 30 }); // inside the 60 s refresh margin
      const { alice } = await authorizedPair(server);
      const exchanged = (await h.events(alice.tenant, 'tool.credential_exchanged')).length;
      const call = await h.whoami(alice, 'gh', 'helper');
      expect(call.answer).toMatchObject({ subject: 'alice' });
      expect(server.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length).toBeGreaterThan(0);
      expect(server.tokenRequests.at(-1)).toMatchObject({ grant_type: 'refresh_token', resource: server.url });
      expect((await h.events(alice.tenant, 'tool.credential_exchanged')).length).toBeGreaterThan(exchanged);
    });

    it('refreshes after the server refuses the token (401): that call is retryable, the next one carries the new token', async () => {
      const server = await serverWith();
      const { alice } = await authorizedPair(server);
      const before = (await h.whoami(alice, 'gh', 'helper')).answer?.serial as number;
      server.expireAccessTokens();
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'server_unavailable' });
      const after = await h.whoami(alice, 'gh', 'helper');
      expect(after.answer).toMatchObject({ subject: 'alice' });
      expect(after.answer?.serial).toBeGreaterThan(before);
    });

    it('expires the binding when the server refuses the refresh: calls and the catalogue say refresh_failed', async () => {
      const server = await serverWith({ accessTokenTtlSeconds: 30 });
      const { alice, aliceBinding } = await authorizedPair(server);
      server.forgetTokens();
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
      const catalogue = await h.internal('_tools.catalogue', alice, { agent_id: 'helper' });
      expect(catalogue).toMatchObject({
        ok: true,
        result: { tools: [], auth_required: [{ server_id: 'gh', reason: 'refresh_failed' }] },
      });
      const { items } = await list(alice);
      expect(items.find((b) => b.binding_id === aliceBinding)).toMatchObject({ state: 'expired', refreshable: false });
      const required = await h.events(alice.tenant, 'mcp.connection.auth_required');
      expect(required.at(-1)?.payload).toMatchObject({ ServerID: 'gh', Reason: 'refresh_failed', PauseToken: '' });
    });

    it("verifies a JWT access token's audience against the resource indicator", async () => {
      const server = await serverWith({ jwtAccessTokens: true });
      const { alice } = await authorizedPair(server);
      const [frame] = await h.events(alice.tenant, 'tool.credential_exchanged');
      expect(frame?.payload).toMatchObject({ AudienceVerified: true });
      expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    });
  });

  describe('mcp.servers.refresh_binding', () => {
    it('refreshes a binding now for an admin', async () => {
      const server = await serverWith();
      const { alice, aliceBinding } = await authorizedPair(server);
      const refreshes = server.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length;
      const answer = await h.call<{ binding: Binding }>(
        'mcp.servers.refresh_binding',
        { server_id: 'gh', binding_id: aliceBinding },
        alice,
      );
      expect(answer.binding).toMatchObject({
        binding_id: aliceBinding,
        state: 'active',
        refreshable: true,
        user: 'alice',
      });
      expect(server.tokenRequests.filter((r) => r.grant_type === 'refresh_token')).toHaveLength(refreshes + 1);
      expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    });

    it('refuses a caller without admin identity_scope_required', async () => {
      const server = await serverWith();
      const { bob, bobBinding } = await authorizedPair(server);
      const refused = await h.outcome('mcp.servers.refresh_binding', { server_id: 'gh', binding_id: bobBinding }, bob);
      expect(refused).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it("refuses an unknown binding, another server's or another tenant's not_found", async () => {
      const server = await serverWith();
      const { alice, aliceBinding } = await authorizedPair(server);
      const stranger = h.caller('carol');
      for (const [who, body] of [
        [alice, { server_id: 'gh', binding_id: 'mcpb_nope' }],
        [alice, { server_id: 'other', binding_id: aliceBinding }],
        [stranger, { server_id: 'gh', binding_id: aliceBinding }],
      ] as const) {
        expect(await h.outcome('mcp.servers.refresh_binding', body, who)).toMatchObject({
          ok: false,
          code: 'not_found',
        });
      }
    });

    it('refuses a binding without a refresh token conflict', async () => {
      const server = await serverWith({ refreshTokens: false });
      const { alice, aliceBinding } = await authorizedPair(server);
      const refused = await h.outcome(
        'mcp.servers.refresh_binding',
        { server_id: 'gh', binding_id: aliceBinding },
        alice,
      );
      expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    });

    it('refuses a revoked binding conflict', async () => {
      const server = await serverWith();
      const { alice, aliceBinding } = await authorizedPair(server);
      await h.call('mcp.servers.revoke_binding', { server_id: 'gh', binding_id: aliceBinding }, alice);
      const refused = await h.outcome(
        'mcp.servers.refresh_binding',
        { server_id: 'gh', binding_id: aliceBinding },
        alice,
      );
      expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    });
  });

  describe('mcp.servers.revoke_binding', () => {
    it("revokes one user's binding: its next call is auth_required, the other user's still works, the server is told", async () => {
      const server = await serverWith();
      const { alice, bob, aliceBinding } = await authorizedPair(server);
      expect((await h.whoami(alice, 'gh', 'helper')).ok).toBe(true);
      const revoked = await h.call('mcp.servers.revoke_binding', { server_id: 'gh', binding_id: aliceBinding }, alice);
      expect(revoked).toMatchObject({ binding_id: aliceBinding, revoked: true });
      expect(server.revoked.length).toBeGreaterThan(0);
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
      const catalogue = await h.internal('_tools.catalogue', alice, { agent_id: 'helper' });
      expect(catalogue).toMatchObject({
        ok: true,
        result: { auth_required: [{ server_id: 'gh', reason: 'revoked' }] },
      });
      expect((await h.whoami(bob, 'gh', 'helper')).answer).toMatchObject({ subject: 'bob' });
      const { items } = await list(alice);
      expect(items.find((b) => b.binding_id === aliceBinding)).toMatchObject({ state: 'revoked' });
    });

    it('answers revoked false for a binding revoked already', async () => {
      const server = await serverWith();
      const { alice, aliceBinding } = await authorizedPair(server);
      const body = { server_id: 'gh', binding_id: aliceBinding };
      await h.call('mcp.servers.revoke_binding', body, alice);
      expect(await h.call('mcp.servers.revoke_binding', body, alice)).toMatchObject({ revoked: false });
    });

    it('refuses a caller without admin identity_scope_required, and an unknown binding not_found', async () => {
      const server = await serverWith();
      const { alice, bob, bobBinding } = await authorizedPair(server);
      expect(
        await h.outcome('mcp.servers.revoke_binding', { server_id: 'gh', binding_id: bobBinding }, bob),
      ).toMatchObject({
        ok: false,
        code: 'identity_scope_required',
      });
      expect(
        await h.outcome('mcp.servers.revoke_binding', { server_id: 'gh', binding_id: 'mcpb_x' }, alice),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect((await h.whoami(bob, 'gh', 'helper')).ok).toBe(true);
    });
  });

  describe('tools.revoke_oauth', () => {
    it("revokes every binding of the tenant for the source: every user's next call is auth_required", async () => {
      const server = await serverWith();
      const { alice, bob } = await authorizedPair(server);
      const answer = await h.call('tools.revoke_oauth', { source: 'gh' }, alice);
      expect(answer).toMatchObject({ source: 'gh', revoked: 2 });
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
      expect(await h.whoami(bob, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
      expect(await h.call('tools.revoke_oauth', { source: 'gh' }, alice)).toMatchObject({ revoked: 0 });
    });

    it('revokes only the binding scope named', async () => {
      const server = await serverWith();
      const { alice } = await authorizedPair(server);
      expect(await h.call('tools.revoke_oauth', { source: 'gh', binding_scope: 'tenant' }, alice)).toMatchObject({
        revoked: 0,
      });
      expect((await h.whoami(alice, 'gh', 'helper')).ok).toBe(true);
    });

    it('refuses a caller without admin identity_scope_required', async () => {
      const server = await serverWith();
      const { bob } = await authorizedPair(server);
      expect(await h.outcome('tools.revoke_oauth', { source: 'gh' }, bob)).toMatchObject({
        ok: false,
        code: 'identity_scope_required',
      });
      expect((await h.whoami(bob, 'gh', 'helper')).ok).toBe(true);
    });
  });

  describe('mcp.servers.bindings.list', () => {
    it('shows an admin every binding of the tenant with its user, and anyone else their own', async () => {
      const server = await serverWith();
      const { alice, bob, aliceBinding, bobBinding } = await authorizedPair(server);
      const all = await list(alice, { server_id: 'gh' });
      expect(all.items.map((b) => b.binding_id).sort()).toEqual([aliceBinding, bobBinding].sort());
      expect(all.items.find((b) => b.binding_id === bobBinding)).toMatchObject({
        server_id: 'gh',
        binding_scope: 'user',
        tenant: alice.tenant,
        user: 'bob',
        state: 'active',
        scopes: ['mcp:tools'],
        refreshable: true,
      });
      const own = await list(bob);
      expect(own.items.map((b) => b.binding_id)).toEqual([bobBinding]);
      expect((await list(h.caller('carol'))).items).toEqual([]);
    });

    it('pages with next_cursor', async () => {
      const server = await serverWith();
      const { alice } = await authorizedPair(server);
      const first = await list(alice, { limit: 1 });
      expect(first.items).toHaveLength(1);
      const second = await list(alice, { limit: 1, cursor: first.next_cursor });
      expect(second.items).toHaveLength(1);
      expect(second.next_cursor).toBeUndefined();
      expect(second.items[0]?.binding_id).not.toBe(first.items[0]?.binding_id);
    });

    it('refuses a cursor of another read invalid_request', async () => {
      const alice = h.caller('alice');
      expect(await h.outcome('mcp.servers.bindings.list', { cursor: 'bm90LWEtY3Vyc29y' }, alice)).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });

  it.each([
    ['mcp.servers.bindings.list', {}],
    ['mcp.servers.refresh_binding', { server_id: 'gh', binding_id: 'mcpb_x' }],
    ['mcp.servers.revoke_binding', { server_id: 'gh', binding_id: 'mcpb_x' }],
    ['tools.revoke_oauth', { source: 'gh' }],
  ] as const)('%s refuses a body identity naming another user identity_required', async (method, body) => {
    const alice = h.caller('alice');
    const outcome = await h.outcome(method, { ...body, identity: { user: 'mallory' } }, alice);
    expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
  });

  it('never lets a token, code or client secret into an answer, a published event or a log line', async () => {
    const server = await serverWith({ accessTokenTtlSeconds: 30 });
    const { alice, aliceBinding } = await authorizedPair(server);
    const answers = [
      JSON.stringify(await list(alice)),
      JSON.stringify(await h.whoami(alice, 'gh', 'helper')),
      JSON.stringify(
        await settle(h.call('mcp.servers.refresh_binding', { server_id: 'gh', binding_id: aliceBinding }, alice)),
      ),
      JSON.stringify(await h.call('tools.revoke_oauth', { source: 'gh' }, alice)),
    ];
    const events = JSON.stringify(await storedEvents(h.service.bus, {}));
    const logs = h.logs.join('\n');
    const secrets = servers.flatMap((s) => [...s.issued]);
    expect(h.logs.length).toBeGreaterThan(0);
    expect(events).toContain('tool.credential_exchanged');
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      expect(events.includes(secret), 'an event carries a secret').toBe(false);
      expect(logs.includes(secret), 'a log line carries a secret').toBe(false);
      for (const answer of answers) expect(answer.includes(secret), 'an answer carries a secret').toBe(false);
    }
  });
});

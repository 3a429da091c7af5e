import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthMcpServer } from '@ars/testkit';
import type { OAuthMcpServer } from '@ars/testkit';
import { flowIdOf } from '../../src/oauth/flow.repository.ts';
import type { FlowRecord } from '../../src/oauth/flow.repository.ts';
import { oauthAgent, REDIRECT_BASE, resultOf, startOAuthHarness } from './support.ts';
import type { OAuthHarness } from './support.ts';

/** `_oauth.begin` → the authorization server → `_oauth.complete`, and the grant at use. */
describe('OAuth-bound MCP servers: authorization', () => {
  let h: OAuthHarness;
  let server: OAuthMcpServer;

  beforeAll(async () => {
    [h, server] = await Promise.all([startOAuthHarness(), startOAuthMcpServer()]);
  });
  afterAll(async () => {
    await h?.stop();
    await server?.stop();
  });

  /** An admin alice of a fresh tenant whose agent `helper` has the server as `gh`. */
  async function tenantWithServer(extra: Parameters<typeof oauthAgent>[2] = {}) {
    const alice = h.caller('alice');
    await h.configure(alice, 'helper', oauthAgent('gh', server.url, extra));
    return alice;
  }

  const begin = (who: ReturnType<OAuthHarness['caller']>, body: Record<string, unknown>) =>
    h.internal('_oauth.begin', who, { run: `task-${randomUUID()}`, pause_token: 'p-1', agent_id: 'helper', ...body });

  async function authorizeUrlOf(who: ReturnType<OAuthHarness['caller']>, run?: string) {
    const begun = await begin(who, { server_id: 'gh', ...(run === undefined ? {} : { run }) });
    const result = resultOf<{ authorize_url: string; state: string }>(begun);
    const url = new URL(result.authorize_url);
    url.searchParams.set('login_hint', who.user);
    const response = await fetch(url, { redirect: 'manual' });
    await response.body?.cancel();
    const callback = new URL(response.headers.get('location') ?? '');
    return { state: result.state, code: callback.searchParams.get('code') ?? '' };
  }

  it('lists a server that asks for OAuth under auth_required (no_grant) and leaves its tools out', async () => {
    const alice = await tenantWithServer();
    const catalogue = await h.internal('_tools.catalogue', alice, { agent_id: 'helper' });
    expect(catalogue).toMatchObject({
      ok: true,
      result: {
        tools: [],
        unavailable_servers: [],
        auth_required: [{ server_id: 'gh', provider_name: 'gh', binding_scope: 'user', reason: 'no_grant' }],
      },
    });
  });

  it('refuses a call without a grant auth_required', async () => {
    const alice = await tenantWithServer();
    const call = await h.whoami(alice, 'gh', 'helper');
    expect(call).toMatchObject({ ok: false, code: 'conflict', reason: 'auth_required' });
  });

  it('begins with PKCE S256, a 32-byte state, the resource indicator and the gateway callback', async () => {
    const alice = await tenantWithServer();
    const begun = await begin(alice, { server_id: 'gh', pause_token: 'pause-9' });
    expect(begun).toMatchObject({
      ok: true,
      result: {
        status: 'authorize',
        server_id: 'gh',
        provider_name: 'gh',
        binding_scope: 'user',
        scopes: ['mcp:tools'],
      },
    });
    const result = resultOf<{ authorize_url: string; state: string; expires_at: string }>(begun);
    const url = new URL(result.authorize_url);
    expect(url.origin + url.pathname).toBe(server.authorizeUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBe(result.state);
    expect(Buffer.from(result.state, 'base64url')).toHaveLength(32);
    expect(url.searchParams.get('redirect_uri')).toBe(`${REDIRECT_BASE}/v1/oauth/callback`);
    expect(url.searchParams.get('resource')).toBe(server.url);
    const ttl = Date.parse(result.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const [event] = await h.events(alice.tenant, 'mcp.connection.auth_required');
    expect(event?.payload).toMatchObject({
      ServerID: 'gh',
      AgentID: 'helper',
      State: 'auth_required',
      PauseToken: 'pause-9',
      Reason: 'no_grant',
    });
  });

  it("completes: the grant is the user's, the run hears of it, the catalogue lists the tools and a call carries the token", async () => {
    const alice = await tenantWithServer();
    const run = `task-${randomUUID()}`;
    h.serveRun(run);
    const authorized = await h.authorize(alice, { server_id: 'gh', agent_id: 'helper', run });
    expect(authorized.completed).toMatchObject({
      ok: true,
      result: { outcome: 'completed', server_id: 'gh', task_id: run, run_notified: true },
    });
    expect(h.delivered.get(run)).toEqual([
      {
        method: 'auth_completed',
        auth: {
          pause_token: `pause-${run}`,
          state: authorized.state,
          server_id: 'gh',
          binding_scope: 'user',
          outcome: 'completed',
        },
        event_id: `oauth:${authorized.state}`,
      },
    ]);
    const catalogue = await h.internal('_tools.catalogue', alice, { agent_id: 'helper' });
    expect(catalogue).toMatchObject({ ok: true, result: { tools: [{ name: 'gh__whoami' }], auth_required: [] } });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice', scopes: ['mcp:tools'] });
  });

  it('publishes tool.credential_exchanged with the run identity and no token', async () => {
    const alice = await tenantWithServer();
    const run = `task-${randomUUID()}`;
    await h.authorize(alice, { server_id: 'gh', agent_id: 'helper', run });
    const [frame] = await h.events(alice.tenant, 'tool.credential_exchanged');
    expect(frame?.run).toBe(run);
    expect(Object.keys(frame?.payload ?? {}).sort()).toEqual([
      'ActorAsserted',
      'AudienceVerified',
      'BindingScope',
      'BrokerHost',
      'ExpiresAt',
      'GrantedScopes',
      'Source',
      'SubjectKind',
    ]);
    expect(frame?.payload).toMatchObject({
      Source: 'gh',
      BindingScope: 'user',
      SubjectKind: 'user',
      BrokerHost: new URL(server.tokenUrl).host,
      GrantedScopes: ['mcp:tools'],
      AudienceVerified: true,
      ActorAsserted: false,
    });
    expect(Date.parse((frame?.payload as { ExpiresAt: string }).ExpiresAt)).toBeGreaterThan(Date.now());
  });

  it('answers run_notified false when the run has no live inbox', async () => {
    const alice = await tenantWithServer();
    const authorized = await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    expect(authorized.completed).toMatchObject({ ok: true, result: { outcome: 'completed', run_notified: false } });
  });

  it("never uses one user's grant for another user", async () => {
    const alice = await tenantWithServer();
    const bob = h.caller('bob', alice.tenant, []);
    await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    expect(await h.whoami(bob, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
    const catalogue = await h.internal('_tools.catalogue', bob, { agent_id: 'helper' });
    expect(catalogue).toMatchObject({
      ok: true,
      result: { tools: [], auth_required: [{ server_id: 'gh', reason: 'no_grant' }] },
    });
    await h.authorize(bob, { server_id: 'gh', agent_id: 'helper' });
    expect((await h.whoami(bob, 'gh', 'helper')).answer).toMatchObject({ subject: 'bob' });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
  });

  it('shares a tenant-scope grant with every user of the tenant', async () => {
    const alice = await tenantWithServer({ binding_scope: 'tenant' });
    const bob = h.caller('bob', alice.tenant, []);
    await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    expect((await h.whoami(bob, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
  });

  it('keeps session-scope grants apart per session', async () => {
    const alice = await tenantWithServer({ binding_scope: 'session' });
    await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    const elsewhere = { ...alice, session: 's-other' };
    expect(await h.whoami(elsewhere, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
  });

  it('answers bound to a begin when a usable grant exists', async () => {
    const alice = await tenantWithServer();
    const authorized = await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    const again = await begin(alice, { server_id: 'gh' });
    const bindingId = resultOf<{ binding_id: string }>(authorized.completed).binding_id;
    expect(again).toMatchObject({ ok: true, result: { status: 'bound', server_id: 'gh', binding_id: bindingId } });
  });

  it('uses a configured provider: its endpoints and client_id, no registration', async () => {
    const alice = h.caller('alice');
    server.registerClient({ client_id: 'ars-acme', redirect_uris: [`${REDIRECT_BASE}/v1/oauth/callback`] });
    const provider = {
      provider_name: 'acme',
      credential_broker: 'vault://oauth/acme',
      authorize_url: server.authorizeUrl,
      token_url: server.tokenUrl,
      client_id: 'ars-acme',
      scopes: ['mcp:tools'],
    };
    await h.configure(alice, 'helper', oauthAgent('gh', server.url, { oauth_provider: provider }));
    const registrations = server.registrations;
    const catalogue = await h.internal('_tools.catalogue', alice, { agent_id: 'helper' });
    expect(catalogue).toMatchObject({
      ok: true,
      result: { auth_required: [{ server_id: 'gh', provider_name: 'acme', scopes: ['mcp:tools'] }] },
    });
    const authorized = await h.authorize(alice, { server_id: 'gh', agent_id: 'helper' });
    expect(authorized.begun).toMatchObject({ provider_name: 'acme' });
    expect(new URL(authorized.begun.authorize_url as string).searchParams.get('client_id')).toBe('ars-acme');
    expect(authorized.completed).toMatchObject({ ok: true, result: { outcome: 'completed' } });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    expect(server.registrations).toBe(registrations);
  });

  describe('refusals of _oauth.complete', () => {
    it("refuses a code exchanged with another flow's PKCE verifier exchange_failed", async () => {
      const alice = await tenantWithServer();
      const first = await authorizeUrlOf(alice);
      const second = await authorizeUrlOf(alice);
      const crossed = await h.complete({ state: first.state, code: second.code });
      expect(crossed).toMatchObject({ ok: false, code: 'conflict', reason: 'exchange_failed' });
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
    });

    it('refuses a response naming another issuer issuer_mismatch (RFC 9207), and tells the run it was denied', async () => {
      const alice = await tenantWithServer();
      const run = `task-${randomUUID()}`;
      h.serveRun(run);
      const flow = await authorizeUrlOf(alice, run);
      const mixedUp = await h.complete({ state: flow.state, code: flow.code, iss: 'https://attacker.example/' });
      expect(mixedUp).toMatchObject({ ok: false, code: 'conflict', reason: 'issuer_mismatch' });
      expect(h.delivered.get(run)).toMatchObject([{ auth: { outcome: 'denied' } }]);
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
    });

    it("accepts a response whose iss is the flow's authorization server", async () => {
      const alice = await tenantWithServer();
      const flow = await authorizeUrlOf(alice);
      expect(await h.complete({ state: flow.state, code: flow.code, iss: server.issuer })).toMatchObject({ ok: true });
      expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    });

    it('refuses a state used already unknown_state', async () => {
      const alice = await tenantWithServer();
      const flow = await authorizeUrlOf(alice);
      expect(await h.complete({ state: flow.state, code: flow.code })).toMatchObject({ ok: true });
      expect(await h.complete({ state: flow.state, code: flow.code })).toMatchObject({
        ok: false,
        code: 'not_found',
        reason: 'unknown_state',
      });
    });

    it('refuses an expired state unknown_state', async () => {
      const alice = await tenantWithServer();
      const flow = await authorizeUrlOf(alice);
      const flows = h.store.collection<FlowRecord>('mcp_oauth_flows');
      await flows.updateOne({ _id: flowIdOf(flow.state) }, { $set: { expires_ms: Date.now() - 1 } });
      expect(await h.complete({ state: flow.state, code: flow.code })).toMatchObject({
        ok: false,
        reason: 'unknown_state',
      });
    });

    it('refuses a state no flow began unknown_state', async () => {
      expect(await h.complete({ state: 'never-begun', code: 'x' })).toMatchObject({
        ok: false,
        code: 'not_found',
        reason: 'unknown_state',
      });
    });

    it('refuses a callback with neither code nor error invalid_request', async () => {
      expect(await h.complete({ state: 'whatever' })).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it('delivers a denial to the run as outcome denied', async () => {
      const alice = await tenantWithServer();
      const run = `task-${randomUUID()}`;
      h.serveRun(run);
      server.consent = 'deny';
      try {
        const authorized = await h.authorize(alice, { server_id: 'gh', agent_id: 'helper', run });
        expect(authorized.callback.searchParams.get('error')).toBe('access_denied');
        expect(authorized.completed).toMatchObject({ ok: true, result: { outcome: 'denied', run_notified: true } });
        expect(h.delivered.get(run)).toMatchObject([{ auth: { outcome: 'denied', reason: 'access_denied' } }]);
      } finally {
        server.consent = 'approve';
      }
      expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'auth_required' });
    });
  });

  describe('refusals of _oauth.begin', () => {
    it('refuses an agent the tenant cannot start unknown_agent', async () => {
      const alice = await tenantWithServer();
      expect(await begin(alice, { server_id: 'gh', agent_id: 'nope' })).toMatchObject({
        ok: false,
        reason: 'unknown_agent',
      });
    });

    it('refuses a server the agent does not have unknown_server', async () => {
      const alice = await tenantWithServer();
      expect(await begin(alice, { server_id: 'nope' })).toMatchObject({
        ok: false,
        code: 'invalid_request',
        reason: 'unknown_server',
      });
    });

    it('refuses a server that is not OAuth-bound not_oauth', async () => {
      const alice = h.caller('alice');
      const stdio = { server_id: 'local', transport: 'stdio', command: process.execPath, args: ['-e', ''] };
      await h.configure(alice, 'helper', { mcp_connections: [stdio] });
      expect(await begin(alice, { server_id: 'local' })).toMatchObject({
        ok: false,
        code: 'conflict',
        reason: 'not_oauth',
      });
    });

    it("refuses a body naming another user's run scope_mismatch", async () => {
      const alice = await tenantWithServer();
      const bob = h.caller('bob', alice.tenant, []);
      const forged = await h.internal('_oauth.begin', bob, {
        user: 'alice',
        run: 'task-x',
        pause_token: 'p',
        agent_id: 'helper',
        server_id: 'gh',
      });
      expect(forged).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { startCredentialBroker, startOAuthMcpServer } from '@ars/testkit';
import type { OAuthMcpServer, TestCredentialBroker } from '@ars/testkit';
import { oauthAgent, resultOf, startOAuthHarness } from './support.ts';
import type { OAuthHarness } from './support.ts';

/**
 * OAuth providers whose `credential_broker` is an http(s) URL: the host
 * takes each binding's token from that broker (no interactive flow), and
 * the MCP server checks it as any other (the test broker has the server's
 * authorization server mint it for the subject it is asked about).
 */
describe('OAuth-bound MCP servers: tokens from an external credential broker', () => {
  let h: OAuthHarness;
  let server: OAuthMcpServer;
  let broker: TestCredentialBroker;
  let resourceBroker: TestCredentialBroker;

  /** What the broker mints: a token of the server for the subject's user (the subject kind for a tenant binding). */
  const mint = (body: Record<string, unknown> | undefined) => {
    const subject = (body?.subject ?? {}) as { kind?: string; user?: string };
    return server.issueAccessToken({
      subject: subject.user ?? subject.kind ?? 'nobody',
      scopes: (body?.scopes as string[] | undefined) ?? [],
      resource: body?.resource as string,
    });
  };

  beforeAll(async () => {
    [h, server] = await Promise.all([startOAuthHarness(), startOAuthMcpServer()]);
    broker = await startCredentialBroker({ credential: mint });
    resourceBroker = await startCredentialBroker({
      credential: mint,
      audience: (body) => String(body?.resource),
    });
  });
  afterAll(async () => {
    await h?.stop();
    await server?.stop();
    await broker?.stop();
    await resourceBroker?.stop();
  });

  /** alice (admin) of a fresh tenant whose agent `helper` has the server as `gh`, its provider `acme` brokered; bob of it. */
  async function tenant(options: { brokerUrl?: string; binding_scope?: string } = {}) {
    const alice = h.caller('alice');
    const bob = h.caller('bob', alice.tenant, []);
    const provider = {
      provider_name: 'acme',
      credential_broker: options.brokerUrl ?? `${broker.url}?pool=main`,
      scopes: ['mcp:tools'],
    };
    const extra = options.binding_scope === undefined ? {} : { binding_scope: options.binding_scope };
    await h.configure(alice, 'helper', oauthAgent('gh', server.url, { oauth_provider: provider, ...extra }));
    return { alice, bob };
  }

  const requestsOf = (b: TestCredentialBroker, tenantId: string) =>
    b.requests.filter((r) => (r.body?.subject as { tenant?: string } | undefined)?.tenant === tenantId);

  const catalogue = (who: VerifiedIdentity) => h.internal('_tools.catalogue', who, { agent_id: 'helper' });

  it('calls with a token the broker handed out for the run user, asking it as the protocol says', async () => {
    const { alice } = await tenant();
    const tokenRequests = server.tokenRequests.length;
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice', scopes: ['mcp:tools'] });
    const [asked, ...more] = requestsOf(broker, alice.tenant);
    expect(more).toEqual([]);
    expect(asked?.body).toEqual({
      format_version: 1,
      purpose: 'tool',
      provider: 'acme',
      resource: server.url,
      scopes: ['mcp:tools'],
      subject: { kind: 'user', tenant: alice.tenant, user: 'alice' },
      actor: { service: 'agent-registry', agent_id: 'helper', run: 'r-1' },
    });
    // No interactive flow: the authorization server saw no token request.
    expect(server.tokenRequests).toHaveLength(tokenRequests);
  });

  it('lists the tools in the catalogue, with nothing to authorize', async () => {
    const { alice } = await tenant();
    expect(await catalogue(alice)).toMatchObject({
      ok: true,
      result: { tools: [{ name: 'gh__whoami' }], auth_required: [], unavailable_servers: [] },
    });
  });

  it('asks the broker once while the token lasts', async () => {
    const { alice } = await tenant();
    for (let i = 0; i < 3; i++) expect((await h.whoami(alice, 'gh', 'helper')).ok).toBe(true);
    expect(requestsOf(broker, alice.tenant)).toHaveLength(1);
  });

  it('publishes tool.provider_credential_fetched and tool.credential_exchanged on the run for each fetch, never the token', async () => {
    const { alice } = await tenant();
    await h.whoami(alice, 'gh', 'helper');
    const [fetched, ...moreFetched] = await h.events(alice.tenant, 'tool.provider_credential_fetched');
    const [exchanged, ...moreExchanged] = await h.events(alice.tenant, 'tool.credential_exchanged');
    expect([...moreFetched, ...moreExchanged]).toEqual([]);
    expect(fetched?.run).toBe('r-1');
    expect(Object.keys(fetched?.payload ?? {}).sort()).toEqual(['Endpoint', 'ExpiresAt', 'FormatVersion', 'Provider']);
    expect(fetched?.payload).toMatchObject({ Provider: 'acme', Endpoint: broker.url, FormatVersion: 1 });
    expect(exchanged?.run).toBe('r-1');
    expect(Object.keys(exchanged?.payload ?? {}).sort()).toEqual([
      'ActorAsserted',
      'AudienceVerified',
      'BindingScope',
      'BrokerHost',
      'ExpiresAt',
      'GrantedScopes',
      'Source',
      'SubjectKind',
    ]);
    expect(exchanged?.payload).toMatchObject({
      Source: 'gh',
      BindingScope: 'user',
      SubjectKind: 'user',
      BrokerHost: new URL(broker.url).host,
      GrantedScopes: ['mcp:tools'],
      // The test broker names the provider as the audience, and the token is opaque.
      AudienceVerified: false,
      ActorAsserted: true,
    });
    const expiresAt = Date.parse((exchanged?.payload as { ExpiresAt: string }).ExpiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect((fetched?.payload as { ExpiresAt: string }).ExpiresAt).toBe(new Date(expiresAt).toISOString());
    const published = JSON.stringify([fetched, exchanged]);
    for (const secret of server.issued) expect(published).not.toContain(secret);
  });

  it("says AudienceVerified when the broker's audience is the server", async () => {
    const { alice } = await tenant({ brokerUrl: resourceBroker.url });
    await h.whoami(alice, 'gh', 'helper');
    const [exchanged] = await h.events(alice.tenant, 'tool.credential_exchanged');
    expect(exchanged?.payload).toMatchObject({ AudienceVerified: true });
  });

  it("gives every user of the tenant the tenant's token for a tenant-scope binding", async () => {
    const { alice, bob } = await tenant({ binding_scope: 'tenant' });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'tenant' });
    expect((await h.whoami(bob, 'gh', 'helper')).answer).toMatchObject({ subject: 'tenant' });
    const asked = requestsOf(broker, alice.tenant);
    expect(asked.map((r) => r.body?.subject)).toEqual([{ kind: 'tenant', tenant: alice.tenant }]);
  });

  it("keeps each user's token apart for a user-scope binding", async () => {
    const { alice, bob } = await tenant();
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
    expect((await h.whoami(bob, 'gh', 'helper')).answer).toMatchObject({ subject: 'bob' });
  });

  it('fetches another token after the server refuses the cached one: that call is server_unavailable, the next carries it', async () => {
    const { alice } = await tenant();
    const before = (await h.whoami(alice, 'gh', 'helper')).answer?.serial as number;
    server.expireAccessTokens();
    expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'server_unavailable' });
    const after = await h.whoami(alice, 'gh', 'helper');
    expect(after.answer).toMatchObject({ subject: 'alice' });
    expect(after.answer?.serial).toBeGreaterThan(before);
    expect(requestsOf(broker, alice.tenant)).toHaveLength(2);
  });

  it('refuses a call server_unavailable while the broker fails, says so with tool.provider_credential_fetch_failed, and serves once it answers', async () => {
    const { alice } = await tenant();
    broker.fail({ status: 503 });
    expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({ ok: false, reason: 'server_unavailable' });
    const [failed] = await h.events(alice.tenant, 'tool.provider_credential_fetch_failed');
    expect(failed?.run).toBe('r-1');
    expect(failed?.payload).toEqual({ Provider: 'acme', Endpoint: broker.url, Reason: 'http_503' });
    expect((await h.whoami(alice, 'gh', 'helper')).answer).toMatchObject({ subject: 'alice' });
  });

  it('lists the server unavailable (auth_unavailable) in the catalogue while the broker does not answer', async () => {
    const { alice } = await tenant();
    broker.fail({ status: 502 });
    expect(await catalogue(alice)).toMatchObject({
      ok: true,
      result: { tools: [], auth_required: [], unavailable_servers: [{ server_id: 'gh', state: 'auth_unavailable' }] },
    });
  });

  it('refuses a call auth_required when the broker refuses the binding (4xx), and lists it auth_refused', async () => {
    const { alice } = await tenant();
    broker.fail({ status: 403 }, 2);
    expect(await h.whoami(alice, 'gh', 'helper')).toMatchObject({
      ok: false,
      code: 'conflict',
      reason: 'auth_required',
    });
    expect(await catalogue(alice)).toMatchObject({
      ok: true,
      result: { tools: [], auth_required: [], unavailable_servers: [{ server_id: 'gh', state: 'auth_refused' }] },
    });
    const failures = await h.events(alice.tenant, 'tool.provider_credential_fetch_failed');
    expect(failures.map((f) => (f.payload as { Reason: string }).Reason)).toEqual(['http_403', 'http_403']);
  });

  describe('_oauth.begin', () => {
    const begin = (who: VerifiedIdentity) =>
      h.internal('_oauth.begin', who, {
        run: `task-${randomUUID()}`,
        pause_token: 'p-1',
        agent_id: 'helper',
        server_id: 'gh',
      });

    it('answers bound once the broker hands out a token, starting no flow', async () => {
      const { alice } = await tenant();
      const tokenRequests = server.tokenRequests.length;
      const begun = resultOf(await begin(alice));
      expect(begun).toMatchObject({ status: 'bound', server_id: 'gh' });
      expect(await h.events(alice.tenant, 'mcp.connection.auth_required')).toEqual([]);
      expect(server.tokenRequests).toHaveLength(tokenRequests);
      expect(requestsOf(broker, alice.tenant)).toHaveLength(1);
    });

    it('refuses not_oauth when the broker refuses the binding: no authorization by the user can change it', async () => {
      const { alice } = await tenant();
      broker.fail({ status: 403 });
      expect(await begin(alice)).toMatchObject({ ok: false, reason: 'not_oauth' });
    });

    it('refuses authorization_server_unavailable while the broker does not answer', async () => {
      const { alice } = await tenant();
      broker.fail({ status: 500 });
      expect(await begin(alice)).toMatchObject({ ok: false, reason: 'authorization_server_unavailable' });
    });
  });

  it("serves the public reads with the caller's brokered token", async () => {
    const { alice } = await tenant();
    const read = await h.outcome(
      'mcp.servers.read_resource',
      { server_id: 'gh', agent_id: 'helper', uri: 'whoami://token' },
      alice,
    );
    const text = (read as { result: { contents: { text: string }[] } }).result.contents[0]?.text ?? '{}';
    expect(JSON.parse(text)).toMatchObject({ subject: 'alice' });
  });
});

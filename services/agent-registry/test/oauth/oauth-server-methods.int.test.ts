import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { startOAuthMcpServer } from '@ars/testkit';
import type { OAuthMcpServer } from '@ars/testkit';
import { oauthAgent, startOAuthHarness } from './support.ts';
import type { OAuthHarness } from './support.ts';

/**
 * The public `mcp.servers.*` methods that talk to a server, for an
 * OAuth-bound one: with the caller's usable grant they use it; without one
 * `health` says `auth_required`, `probe` says `ok: false` (`auth_required`),
 * `policy` leaves `allowed_tools` out and the reads refuse 409 `conflict`.
 */
describe('OAuth-bound MCP servers: the public server methods', () => {
  let h: OAuthHarness;
  let server: OAuthMcpServer;

  beforeAll(async () => {
    [h, server] = await Promise.all([startOAuthHarness(), startOAuthMcpServer()]);
  });
  afterAll(async () => {
    await h?.stop();
    await server?.stop();
  });

  /** alice (admin) of a fresh tenant whose agent `helper` has the server as `gh`, and bob (no scopes) of it. */
  async function tenant(extra: Parameters<typeof oauthAgent>[2] = {}) {
    const alice = h.caller('alice');
    const bob = h.caller('bob', alice.tenant, []);
    await h.configure(alice, 'helper', oauthAgent('gh', server.url, extra));
    return { alice, bob };
  }

  async function authorized(who: VerifiedIdentity): Promise<void> {
    const done = await h.authorize(who, { server_id: 'gh', agent_id: 'helper' });
    expect(done.completed).toMatchObject({ ok: true, result: { outcome: 'completed' } });
  }

  const ask = (method: string, who: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    h.outcome(method, { server_id: 'gh', agent_id: 'helper', ...body }, who);

  describe('without a usable grant', () => {
    it('answers health auth_required, not down', async () => {
      const { alice } = await tenant();
      for (let i = 0; i < 2; i++) {
        // The first finds out with a 401 (the server is not known OAuth-bound yet), the second from the gate.
        const health = await ask('mcp.servers.health', alice);
        expect(health).toMatchObject({ ok: true, result: { health: 'auth_required' } });
        expect((health as { result: { error: string } }).result.error).toMatch(/must authorize first/);
      }
    });

    it('answers a probe ok false with error auth_required', async () => {
      const { alice } = await tenant();
      expect(await ask('mcp.servers.probe', alice)).toMatchObject({
        ok: true,
        result: { ok: false, error: 'auth_required' },
      });
    });

    it('refuses prompts, resources, read_resource and refresh_discovery conflict: the caller must authorize first', async () => {
      const { alice } = await tenant();
      for (const [method, body] of [
        ['mcp.servers.prompts', {}],
        ['mcp.servers.resources', {}],
        ['mcp.servers.read_resource', { uri: 'whoami://token' }],
        ['mcp.servers.refresh_discovery', {}],
      ] as const) {
        const refused = await ask(method, alice, body);
        expect(refused, method).toMatchObject({ ok: false, code: 'conflict' });
        expect((refused as { message: string }).message, method).toMatch(/must authorize first/);
      }
    });

    it("answers policy without allowed_tools (the caller's view of the tools is unknown)", async () => {
      const { alice } = await tenant();
      const policy = await ask('mcp.servers.policy', alice);
      expect(policy).toMatchObject({ ok: true, result: { server_id: 'gh', egress: { kind: 'network' } } });
      expect((policy as { result: Record<string, unknown> }).result.allowed_tools).toBeUndefined();
    });

    it('answers so for a server that names its provider too', async () => {
      server.registerClient({ client_id: 'ars-acme', redirect_uris: ['http://127.0.0.1:8080/v1/oauth/callback'] });
      const provider = {
        provider_name: 'acme',
        credential_broker: 'vault://oauth/acme',
        authorize_url: server.authorizeUrl,
        token_url: server.tokenUrl,
        client_id: 'ars-acme',
      };
      const { alice } = await tenant({ oauth_provider: provider });
      expect(await ask('mcp.servers.health', alice)).toMatchObject({ ok: true, result: { health: 'auth_required' } });
      expect(await ask('mcp.servers.prompts', alice)).toMatchObject({ ok: false, code: 'conflict' });
    });
  });

  describe("with the caller's grant", () => {
    it('answers health ok and a probe with the tools', async () => {
      const { alice } = await tenant();
      await authorized(alice);
      expect(await ask('mcp.servers.health', alice)).toMatchObject({ ok: true, result: { health: 'ok' } });
      expect(await ask('mcp.servers.probe', alice)).toMatchObject({
        ok: true,
        result: { ok: true, tools: ['whoami'] },
      });
    });

    it('lists prompts and resources, and refreshes the discovery', async () => {
      const { alice } = await tenant();
      await authorized(alice);
      expect(await ask('mcp.servers.prompts', alice)).toMatchObject({
        ok: true,
        result: { items: [{ name: 'greeting' }] },
      });
      expect(await ask('mcp.servers.resources', alice)).toMatchObject({
        ok: true,
        result: { items: [{ uri: 'whoami://token', mime_type: 'application/json' }] },
      });
      expect(await ask('mcp.servers.refresh_discovery', alice)).toMatchObject({
        ok: true,
        result: { tools: ['whoami'], prompt_count: 1, resource_count: 1 },
      });
    });

    it("reads a resource with the caller's own token", async () => {
      const { alice } = await tenant();
      await authorized(alice);
      const read = await ask('mcp.servers.read_resource', alice, { uri: 'whoami://token' });
      const text = (read as { result: { contents: { text: string }[] } }).result.contents[0]?.text ?? '{}';
      expect(JSON.parse(text)).toMatchObject({ subject: 'alice', scopes: ['mcp:tools'] });
    });

    it('answers policy with the tools a run may see', async () => {
      const { alice } = await tenant();
      await authorized(alice);
      expect(await ask('mcp.servers.policy', alice)).toMatchObject({
        ok: true,
        result: { allowed_tools: ['gh__whoami'] },
      });
    });

    it("never lends one user's grant to another user of the tenant", async () => {
      const { alice, bob } = await tenant();
      await authorized(alice);
      expect(await ask('mcp.servers.read_resource', bob, { uri: 'whoami://token' })).toMatchObject({
        ok: false,
        code: 'conflict',
      });
      expect(await ask('mcp.servers.health', bob)).toMatchObject({ ok: true, result: { health: 'auth_required' } });
      await authorized(bob);
      const read = await ask('mcp.servers.read_resource', bob, { uri: 'whoami://token' });
      const text = (read as { result: { contents: { text: string }[] } }).result.contents[0]?.text ?? '{}';
      expect(JSON.parse(text)).toMatchObject({ subject: 'bob' });
    });

    it('shares a tenant-scope grant with every caller of the tenant', async () => {
      const { alice, bob } = await tenant({ binding_scope: 'tenant' });
      await authorized(alice);
      expect(await ask('mcp.servers.probe', bob)).toMatchObject({ ok: true, result: { ok: true } });
    });
  });
});

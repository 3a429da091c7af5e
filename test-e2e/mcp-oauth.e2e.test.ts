import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { findFreePort, mintToken, startOAuthMcpServer, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { OAuthMcpServer, TestIdentity, TestSystem } from '@ars/testkit';
import { followAuthorize, modelSaw, secretsIn, visit } from './support/oauth-browser.ts';
import { refusal, startWatched } from './support/runs.ts';
import type { WatchedRun } from './support/runs.ts';

/**
 * An agent whose MCP server is OAuth-protected (a local OAuth 2.1
 * authorization server and an MCP server behind bearer auth, from the
 * testkit), driven end to end over HTTP and SSE: a run pauses for its user's
 * authorization, the test plays the browser through the authorization
 * server's consent to the gateway's `/v1/oauth/callback`, and the run
 * resumes and calls the tool with the user's grant. Then the grant's reuse,
 * its per-user scope, its listing and revocation, a denial, and the
 * callback's refusals. No token reaches an event or a log line.
 */

const SERVER_ID = 'gh';
const AGENT_ID = 'oauth-agent';
const PROVIDER = 'testauth';
const CLIENT_ID = 'ars-e2e-client';
const TOOL = `${SERVER_ID}__whoami`;
const WHOAMI = `#script tool:${TOOL};finish:done`;

const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;
const keysOf = (frame: EventFrame) => Object.keys(payload(frame)).sort();

/** A tenant's admin and an ordinary user of it. */
interface Tenant {
  readonly identity: TestIdentity;
  readonly admin: ArsClient;
  readonly owner: ArsClient;
}

describe('OAuth-bound MCP tools in a run', () => {
  let sys: TestSystem;
  let server: OAuthMcpServer;
  let callbackUrl: string;

  beforeAll(async () => {
    // The redirect URI names the gateway, so its port is chosen before the start.
    const port = await findFreePort();
    const base = `http://127.0.0.1:${port}`;
    callbackUrl = `${base}/v1/oauth/callback`;
    server = await startOAuthMcpServer();
    server.registerClient({ client_id: CLIENT_ID, redirect_uris: [callbackUrl] });
    sys = await startTestSystem({ port, env: { OAUTH_REDIRECT_BASE_URL: base } });
    expect(sys.baseUrl).toBe(base);
  });

  afterAll(async () => {
    await sys?.stop();
    await server?.stop();
  });

  async function client(identity: TestIdentity, scopes: string[] = []): Promise<ArsClient> {
    return sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes }) });
  }

  /** A fresh tenant whose agent reaches the server through an installed OAuth provider (a registered client). */
  async function tenantWithOAuthAgent(prefix: string): Promise<Tenant> {
    const identity = uniqueIdentity(prefix);
    const admin = await client(identity, ['admin']);
    const owner = await client(identity);
    await admin.call('agent_config.set_oauth_provider', {
      identity: {},
      agent_id: AGENT_ID,
      provider: {
        provider_name: PROVIDER,
        credential_broker: 'local',
        authorize_url: server.authorizeUrl,
        token_url: server.tokenUrl,
        client_id: CLIENT_ID,
        scopes: ['mcp:tools'],
      },
    });
    await admin.call('agent_config.add_mcp_connection', {
      identity: {},
      agent_id: AGENT_ID,
      connection: { server_id: SERVER_ID, transport: 'streamable_http', url: server.url, oauth_provider: PROVIDER },
    });
    return { identity, admin, owner };
  }

  const startWhoami = (owner: ArsClient) => startWatched(owner, { agent_id: AGENT_ID, query: WHOAMI });

  /** The browser at the authorization server as `user`: redirected to the gateway's callback. */
  async function consent(authorizeUrl: string, user: string): Promise<URL> {
    const callback = await followAuthorize(authorizeUrl, user);
    expect(`${callback.origin}${callback.pathname}`).toBe(callbackUrl);
    return callback;
  }

  /** The run's `tool.auth_required`, then the whole browser round: consent, callback page. */
  async function authorize(run: WatchedRun, user: string): Promise<EventFrame> {
    const required = await run.log.next('tool.auth_required');
    const page = await visit(await consent(String(payload(required)['AuthorizeURL']), user));
    expect(page).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/html/) });
    expect(page.body).toContain('Authorization complete');
    return required;
  }

  /** What `whoami` answered in the run, as the model saw it. */
  const whoamiSeen = (run: WatchedRun) => modelSaw(run.log.frames);

  /** A run of `tenant`'s owner that the user authorizes: it completes. */
  async function authorizedRun(tenant: Tenant): Promise<WatchedRun> {
    const run = await startWhoami(tenant.owner);
    try {
      await authorize(run, tenant.identity.user);
      expect((await run.log.terminal()).type).toBe('task.completed');
    } finally {
      await run.log.close();
    }
    return run;
  }

  /** No secret the authorization server issued (codes, access and refresh tokens) is in `frames` or the logs. */
  function expectNoSecrets(frames: readonly EventFrame[]): void {
    expect(server.issued.length).toBeGreaterThan(0);
    expect(secretsIn(JSON.stringify(frames), server.issued), 'secrets in events').toBe(0);
    expect(secretsIn(sys.logs().join('\n'), server.issued), 'secrets in the logs').toBe(0);
  }

  /** `mcp.servers.bindings.list` of the server, as `caller` sees it. */
  async function bindingsOf(caller: ArsClient): Promise<Record<string, unknown>[]> {
    const page = await caller.call<{ items: Record<string, unknown>[] }>('mcp.servers.bindings.list', {
      identity: {},
      server_id: SERVER_ID,
    });
    return page.items;
  }

  async function cancel(owner: ArsClient, run: WatchedRun): Promise<void> {
    await owner.call('cancel', { identity: { run: run.taskId }, payload: { hard: true } });
    await run.log.terminal();
  }

  it("pauses a run for the user's authorization, resumes it on the callback and calls the tool as that user", async () => {
    const { identity, owner } = await tenantWithOAuthAgent('oauth-flow');
    const run = await startWhoami(owner);
    try {
      const required = await run.log.next('tool.auth_required');
      expect(keysOf(required)).toEqual([
        'AuthorizeURL',
        'BindingScope',
        'PauseToken',
        'Scopes',
        'Source',
        'SourceName',
        'State',
      ]);
      const auth = payload(required);
      expect(auth).toMatchObject({
        Source: SERVER_ID,
        SourceName: PROVIDER,
        BindingScope: 'user',
        Scopes: ['mcp:tools'],
      });
      const authorizeUrl = new URL(String(auth['AuthorizeURL']));
      expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(server.authorizeUrl);
      expect(authorizeUrl.searchParams.get('state')).toBe(auth['State']);
      expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(callbackUrl);
      expect(authorizeUrl.searchParams.get('client_id')).toBe(CLIENT_ID);
      const token = String(auth['PauseToken']);
      expect(payload(await run.log.next('pause.requested'))).toMatchObject({ Token: token });

      const paused = await owner.call<{ items: Record<string, unknown>[] }>('pause.list', {
        identity: {},
        filter: { task_id: run.taskId },
      });
      expect(paused.items).toEqual([
        expect.objectContaining({
          token,
          task_id: run.taskId,
          kind: 'auth',
          tool: SERVER_ID,
          authorize_url: auth['AuthorizeURL'],
        }),
      ]);

      const callback = await consent(authorizeUrl.href, identity.user);
      expect(callback.searchParams.get('state')).toBe(auth['State']);
      const page = await visit(callback);
      expect(page).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/html/) });
      expect(page.body).toContain('Authorization complete');

      const completed = await run.log.next('tool.auth_completed');
      expect(keysOf(completed)).toEqual(['BindingScope', 'PauseToken', 'Source', 'State']);
      expect(payload(completed)).toEqual({
        Source: SERVER_ID,
        BindingScope: 'user',
        State: auth['State'],
        PauseToken: token,
      });
      expect(payload(await run.log.next('pause.resumed'))).toMatchObject({ Token: token, Decision: 'resume' });
      expect(payload(await run.log.next('tool.completed'))).toMatchObject({
        ToolName: TOOL,
        Transport: 'streamable_http',
      });
      expect((await run.log.terminal()).type).toBe('task.completed');
      expect(whoamiSeen(run)).toContain(`"subject":"${identity.user}"`);
      expect(run.log.types()).toContain('tool.credential_exchanged');
      expect(server.tokenRequests.at(-1)).toMatchObject({ grant_type: 'authorization_code', client_id: CLIENT_ID });
      const after = await owner.call<{ items: unknown[] }>('pause.list', {
        identity: {},
        filter: { task_id: run.taskId },
      });
      expect(after.items).toEqual([]);
      // The logs looked through below are those of this flow.
      expect(sys.logs().join('\n')).toContain('oauth authorization completed');
      expectNoSecrets(run.log.frames);
    } finally {
      await run.log.close();
    }
  });

  it('finds by discovery a server without a provider, registers a client and completes the same way', async () => {
    const identity = uniqueIdentity('oauth-discovery');
    const admin = await client(identity, ['admin']);
    const owner = await client(identity);
    await admin.call('agent_config.add_mcp_connection', {
      identity: {},
      agent_id: AGENT_ID,
      connection: { server_id: SERVER_ID, transport: 'streamable_http', url: server.url },
    });
    const registrations = server.registrations;
    const run = await startWhoami(owner);
    try {
      const required = await authorize(run, identity.user);
      expect(payload(required)).toMatchObject({ Source: SERVER_ID, SourceName: SERVER_ID, BindingScope: 'user' });
      const authorizeUrl = new URL(String(payload(required)['AuthorizeURL']));
      expect(authorizeUrl.searchParams.get('client_id')).not.toBe(CLIENT_ID);
      expect(authorizeUrl.searchParams.get('resource')).toBe(server.url);
      expect(server.registrations).toBe(registrations + 1);
      await run.log.next('tool.auth_completed');
      expect((await run.log.terminal()).type).toBe('task.completed');
      expect(whoamiSeen(run)).toContain(`"subject":"${identity.user}"`);
      expectNoSecrets(run.log.frames);
    } finally {
      await run.log.close();
    }
  });

  it("reuses the user's grant in a later run, without a pause", async () => {
    const tenant = await tenantWithOAuthAgent('oauth-reuse');
    const first = await authorizedRun(tenant);
    const serial = /"serial":(\d+)/.exec(whoamiSeen(first))?.[1];
    expect(serial).toBeDefined();

    const again = await startWhoami(tenant.owner);
    try {
      expect((await again.log.terminal()).type).toBe('task.completed');
      expect(again.log.types()).not.toContain('tool.auth_required');
      expect(again.log.types()).not.toContain('pause.requested');
      expect(again.log.types()).toContain('tool.completed');
      // The same access token: the authorization server issued no other.
      expect(whoamiSeen(again)).toContain(`"subject":"${tenant.identity.user}"`);
      expect(whoamiSeen(again)).toContain(`"serial":${serial}`);
      expectNoSecrets([...first.log.frames, ...again.log.frames]);
    } finally {
      await again.log.close();
    }
  });

  it('refreshes a grant whose access token the server refuses, in a later run, without a pause', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-refresh');
    const first = await authorizedRun(tenant);
    const serial = Number(/"serial":(\d+)/.exec(whoamiSeen(first))?.[1]);
    // Every access token issued so far (this one's too) is now refused 401 by the MCP endpoint.
    server.expireAccessTokens();
    const again = await startWhoami(tenant.owner);
    try {
      expect((await again.log.terminal()).type).toBe('task.completed');
      expect(again.log.types()).not.toContain('tool.auth_required');
      expect(whoamiSeen(again)).toContain(`"subject":"${tenant.identity.user}"`);
      const refreshed = Number(/"serial":(\d+)/.exec(whoamiSeen(again))?.[1]);
      expect(refreshed).toBeGreaterThan(serial);
      expect(server.tokenRequests.at(-1)).toMatchObject({ grant_type: 'refresh_token', client_id: CLIENT_ID });
      expectNoSecrets([...first.log.frames, ...again.log.frames]);
    } finally {
      await again.log.close();
    }
  });

  it('pauses a run mid-call when the provider forgot the grant, and resumes it once the user authorizes again', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-forgot');
    const first = await authorizedRun(tenant);
    // As if the user revoked the app at the provider: the access token is refused, the refresh is invalid_grant.
    server.forgetTokens();
    const again = await startWhoami(tenant.owner);
    try {
      await again.log.next('pause.requested');
      await authorize(again, tenant.identity.user);
      await again.log.next('tool.auth_completed');
      expect((await again.log.terminal()).type).toBe('task.completed');
      // Mid-call: the call failed, the run waited, then the call was made once more.
      const types = again.log.types();
      expect(types.indexOf('tool.failed')).toBeGreaterThan(types.indexOf('tool.invoked'));
      expect(types.indexOf('pause.requested')).toBeGreaterThan(types.indexOf('tool.failed'));
      expect(types.filter((t) => t === 'tool.invoked')).toHaveLength(2);
      expect(types.filter((t) => t === 'tool.completed')).toHaveLength(1);
      expect(whoamiSeen(again)).toContain(`"subject":"${tenant.identity.user}"`);
      expectNoSecrets([...first.log.frames, ...again.log.frames]);
    } finally {
      await again.log.close();
    }
  });

  it("pauses a run of another user of the tenant: a grant is its user's", async () => {
    const tenant = await tenantWithOAuthAgent('oauth-peruser');
    const first = await authorizedRun(tenant);
    const other = await client({ ...tenant.identity, user: `${tenant.identity.user}-other` });
    const run = await startWhoami(other);
    try {
      expect(payload(await run.log.next('tool.auth_required'))).toMatchObject({
        Source: SERVER_ID,
        BindingScope: 'user',
      });
      await run.log.next('pause.requested');
      expect(run.log.types()).not.toContain('tool.completed');
      // The other user sees only its own binding, pending; not the first user's.
      const visible = await bindingsOf(other);
      expect(visible).toEqual([
        expect.objectContaining({ user: `${tenant.identity.user}-other`, state: 'pending', refreshable: false }),
      ]);
      await cancel(other, run);
      expectNoSecrets([...first.log.frames, ...run.log.frames]);
    } finally {
      await run.log.close();
    }
  });

  it('lists the binding without token material; tools.revoke_oauth revokes it and the next run pauses for a new grant', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-revoke');
    const first = await authorizedRun(tenant);
    const listed = await bindingsOf(tenant.owner);
    expect(listed).toEqual([
      expect.objectContaining({
        server_id: SERVER_ID,
        binding_scope: 'user',
        tenant: tenant.identity.tenant,
        user: tenant.identity.user,
        state: 'active',
        scopes: ['mcp:tools'],
        agent_id: AGENT_ID,
        provider_name: PROVIDER,
        refreshable: true,
      }),
    ]);
    // No token material, by value or by name.
    const listedText = JSON.stringify(listed);
    expect(secretsIn(listedText, server.issued), 'secrets in the listing').toBe(0);
    expect(listedText).not.toMatch(/access_token|refresh_token|client_secret/);

    const revokedBefore = server.revoked.length;
    const revoked = await tenant.admin.call<{ source: string; revoked: number }>('tools.revoke_oauth', {
      identity: {},
      source: SERVER_ID,
    });
    expect(revoked).toMatchObject({ source: SERVER_ID, revoked: 1 });
    // The authorization server was told (RFC 7009).
    expect(server.revoked.length).toBeGreaterThan(revokedBefore);
    const after = await bindingsOf(tenant.owner);
    expect(after).toEqual([expect.objectContaining({ state: 'revoked', refreshable: false })]);

    // The next run pauses again; authorized again, it completes with a new grant.
    const run = await startWhoami(tenant.owner);
    try {
      await run.log.next('pause.requested');
      await authorize(run, tenant.identity.user);
      expect((await run.log.terminal()).type).toBe('task.completed');
      expect(whoamiSeen(run)).toContain(`"subject":"${tenant.identity.user}"`);
      const relisted = await bindingsOf(tenant.owner);
      expect(relisted).toEqual([expect.objectContaining({ state: 'active' })]);
      expectNoSecrets([...first.log.frames, ...run.log.frames]);
    } finally {
      await run.log.close();
    }
  });

  it('refuses the callback of a used state 404, and of an unknown state 404, in the error envelope', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-state');
    const run = await startWhoami(tenant.owner);
    let callback: URL;
    try {
      const required = await run.log.next('tool.auth_required');
      callback = await consent(String(payload(required)['AuthorizeURL']), tenant.identity.user);
      expect((await visit(callback)).status).toBe(200);
      expect((await run.log.terminal()).type).toBe('task.completed');
    } finally {
      await run.log.close();
    }

    const repeated = await visit(callback);
    expect(repeated.status).toBe(404);
    expect(repeated.type).toMatch(/^application\/json/);
    expect(JSON.parse(repeated.body)).toMatchObject({ code: 'not_found', message: expect.any(String) });

    const unknown = new URL(callbackUrl);
    unknown.searchParams.set('state', 'no-such-state');
    unknown.searchParams.set('code', 'no-such-code');
    const answer = await visit(unknown);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'not_found', message: expect.any(String) });
    expectNoSecrets(run.log.frames);
  });

  it('completes a callback that carries members it does not use (RFC 9207 iss, session_state)', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-iss');
    const run = await startWhoami(tenant.owner);
    try {
      const required = await run.log.next('tool.auth_required');
      const callback = await consent(String(payload(required)['AuthorizeURL']), tenant.identity.user);
      callback.searchParams.set('iss', server.issuer);
      callback.searchParams.set('session_state', 'opaque');
      const page = await visit(callback);
      expect(page.status).toBe(200);
      expect(page.body).toContain('Authorization complete');
      expect((await run.log.terminal()).type).toBe('task.completed');
      expectNoSecrets(run.log.frames);
    } finally {
      await run.log.close();
    }
  });

  it('refuses a callback without state 400 invalid_request', async () => {
    const answer = await visit(`${callbackUrl}?code=some-code`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_request', message: expect.any(String) });
  });

  it('fails the run constraints_conflict when the user denies the authorization (pause.resumed Decision reject)', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-deny');
    const run = await startWhoami(tenant.owner);
    try {
      const required = await run.log.next('tool.auth_required');
      const token = payload(required)['PauseToken'];
      server.consent = 'deny';
      let callback: URL;
      try {
        callback = await consent(String(payload(required)['AuthorizeURL']), tenant.identity.user);
      } finally {
        server.consent = 'approve';
      }
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe(payload(required)['State']);
      const page = await visit(callback);
      expect(page.status).toBe(200);
      expect(page.body).toContain('Authorization was denied');

      const resumed = await run.log.next('pause.resumed');
      expect(payload(resumed)).toMatchObject({ Token: token, Decision: 'reject' });
      expect(String(payload(resumed)['Reason'])).toContain('access_denied');
      const terminal = await run.log.terminal();
      expect(terminal.type).toBe('task.failed');
      expect(payload(terminal)).toMatchObject({ ErrorCode: 'constraints_conflict' });
      expect(run.log.types()).not.toContain('tool.auth_completed');
      expect(run.log.types()).not.toContain('tool.invoked');
      expectNoSecrets(run.log.frames);
    } finally {
      await run.log.close();
    }
  });

  it('refuses tools.revoke_oauth to a caller without the admin scope', async () => {
    const tenant = await tenantWithOAuthAgent('oauth-revoke-gate');
    const refused = await refusal(tenant.owner.call('tools.revoke_oauth', { identity: {}, source: SERVER_ID }));
    expect(refused.status).toBe(403);
  });
});

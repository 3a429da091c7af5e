import { randomBytes } from 'node:crypto';
import { OAUTH_BEGIN, refuse } from '@ars/contracts';
import type { McpConnection, OAuthBeginReply, OAuthBeginRequest } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireOwnRun } from '../handlers/effective-config.handler.ts';
import { runServers } from '../mcp/index.ts';
import type { AgentServers } from '../mcp/index.ts';
import {
  AuthorizationRefused,
  AuthorizationServerUnavailable,
  authorizationUrl,
  locateAuthorizationServer,
  registerPublicClient,
} from './authorization-server.ts';
import type { LocatedAuthorizationServer } from './authorization-server.ts';
import { bindingIdOf, bindingSubject } from './binding-id.ts';
import { isBrokerUrl } from './broker-grants.ts';
import type { BindingRecord, StoredAuthorizationServer, StoredClient } from './binding.repository.ts';
import type { OAuthContext } from './context.ts';
import { flowIdOf } from './flow.repository.ts';
import type { OAuthBound } from './gate.ts';
import { GrantUnusable } from './grants.ts';
import { grantContext } from './sealer.ts';

/**
 * `_oauth.begin`: starts the authorization of an OAuth-bound server for the
 * run's binding scope. The authorization server comes from the provider's
 * endpoints or discovery; the client is the provider's `client_id`, the one
 * this binding registered before at the same server, or a new public client
 * (RFC 7591); the authorization URL carries PKCE (S256), a 32-byte state and
 * the resource indicator. The verifier is sealed by governance; the flow
 * expires after OAUTH_FLOW_TTL_SECONDS. A usable grant answers `bound`.
 * A provider whose tokens come from an external credential broker has no
 * flow: `bound` once its broker hands out a token for the binding; a
 * broker's refusal (4xx) is `not_oauth` (no authorization by the user can
 * change it: the run leaves the server's tools out), a broker that does
 * not answer `authorization_server_unavailable`.
 */

/** Bytes of the random `state` (base64url in the URL). */
const STATE_BYTES = 32;

function unavailable(error: unknown) {
  return refuse(OAUTH_BEGIN, 'authorization_server_unavailable', (error as Error).message, { cause: error });
}

/** The client of the flow: the provider's, the binding's earlier registration at this server, or a new one. */
async function clientFor(
  ctx: OAuthContext,
  record: BindingRecord,
  bound: OAuthBound,
  located: LocatedAuthorizationServer,
  scopes: readonly string[],
): Promise<{ client: StoredClient; registered: boolean }> {
  if (bound.provider?.client_id !== undefined)
    return { client: { client_id: bound.provider.client_id }, registered: false };
  const earlier = record.client;
  const server: StoredAuthorizationServer = located.server;
  if (earlier?.registered?.issuer === server.url && earlier.registered.redirect_uri === ctx.redirectUri) {
    return { client: earlier, registered: false };
  }
  const full = await registerPublicClient(server, ctx.redirectUri, scopes, ctx.fetchFn);
  const secret =
    full.client_secret === undefined
      ? undefined
      : await ctx.sealer.seal(
          { tenant: record.tenant, purpose: 'oauth_grant', context: grantContext(record._id, 'client') },
          full.client_secret,
        );
  return {
    client: {
      client_id: full.client_id,
      ...(secret === undefined ? {} : { client_secret: secret }),
      ...(full.token_endpoint_auth_method === undefined
        ? {}
        : { token_endpoint_auth_method: full.token_endpoint_auth_method }),
      registered: { issuer: server.url, redirect_uri: ctx.redirectUri },
    },
    registered: true,
  };
}

async function resolveServer(ctx: OAuthContext, body: OAuthBeginRequest) {
  const agentId = body.agent_id ?? ctx.lookup.defaultAgentId;
  const servers = await runServers(ctx.lookup, body, agentId);
  if (servers === null) throw refuse(OAUTH_BEGIN, 'unknown_agent', `agent_id ${agentId} names no agent configuration`);
  const spec = servers.connections.find((c) => c.server_id === body.server_id);
  if (spec === undefined)
    throw refuse(OAUTH_BEGIN, 'unknown_server', `agent ${agentId} has no MCP server ${body.server_id}`);
  const bound = await ctx.gate.bound(servers, spec, { probe: true });
  if (bound === undefined) {
    throw refuse(
      OAUTH_BEGIN,
      'not_oauth',
      `MCP server ${body.server_id} names no oauth_provider and does not ask for a token (no 401 with resource_metadata)`,
    );
  }
  return { servers, spec, bound };
}

/** A usable grant of the binding, if there is one now (another run may have completed it). */
async function usable(
  ctx: OAuthContext,
  bindingId: string,
  run: { tenant: string; user: string; session: string; run: string },
) {
  try {
    await ctx.grants.fresh(bindingId, run);
    return true;
  } catch (error) {
    if (error instanceof GrantUnusable) return false;
    throw error;
  }
}

async function startFlow(
  ctx: OAuthContext,
  body: OAuthBeginRequest,
  target: { servers: AgentServers; spec: McpConnection; bound: OAuthBound },
): Promise<OAuthBeginReply> {
  const { servers, spec, bound } = target;
  const run = { tenant: body.tenant, user: body.user, session: body.session, run: body.run };
  const subject = bindingSubject(run, servers.agent_id, spec);
  const bindingId = bindingIdOf(subject);
  if (await usable(ctx, bindingId, run)) return { status: 'bound', server_id: spec.server_id, binding_id: bindingId };

  const record = await ctx.bindings.ensure(bindingId, subject, bound.provider_name, spec.transport);
  let located: LocatedAuthorizationServer;
  let client: StoredClient;
  let registered: boolean;
  let scopes: readonly string[];
  const state = randomBytes(STATE_BYTES).toString('base64url');
  let started: { url: URL; verifier: string };
  try {
    located = await locateAuthorizationServer(spec, bound.provider, {
      ...(bound.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: bound.resourceMetadataUrl }),
      fetchFn: ctx.fetchFn,
    });
    scopes = bound.scopes.length > 0 ? bound.scopes : [...(located.scopesSupported ?? [])];
    ({ client, registered } = await clientFor(ctx, record, bound, located, scopes));
    const request = { redirectUri: ctx.redirectUri, scopes, state };
    started = await authorizationUrl(located.server, { client_id: client.client_id }, request);
  } catch (error) {
    if (error instanceof AuthorizationRefused || error instanceof AuthorizationServerUnavailable) {
      throw unavailable(error);
    }
    throw error;
  }
  if (registered) await ctx.bindings.writeClient(bindingId, client, located.server);

  const flowId = flowIdOf(state);
  const nowMs = ctx.now();
  const verifier = await ctx.sealer.seal(
    { tenant: body.tenant, purpose: 'oauth_flow', context: flowId },
    started.verifier,
  );
  await ctx.flows.prune(nowMs);
  await ctx.flows.put({
    _id: flowId,
    binding_id: bindingId,
    tenant: body.tenant,
    user: body.user,
    session: body.session,
    run: body.run,
    agent_id: servers.agent_id,
    server_id: spec.server_id,
    binding_scope: subject.binding_scope,
    provider_name: bound.provider_name,
    pause_token: body.pause_token,
    verifier,
    redirect_uri: ctx.redirectUri,
    scopes: [...scopes],
    authorization_server: located.server,
    client,
    expires_ms: nowMs + ctx.flowTtlMs,
    created_at: new Date(nowMs).toISOString(),
  });
  const reason = ctx.grants.unusable(record) ?? 'no_grant';
  await ctx.events.authRequired(run, record, { reason, pauseToken: body.pause_token, revisionId: servers.revision_id });
  ctx.logger.info({ binding_id: bindingId, server_id: spec.server_id, task_id: body.run }, 'oauth authorization begun');
  return {
    status: 'authorize',
    server_id: spec.server_id,
    provider_name: bound.provider_name,
    binding_scope: subject.binding_scope,
    binding_id: bindingId,
    authorize_url: started.url.href,
    state,
    scopes: [...scopes],
    expires_at: new Date(nowMs + ctx.flowTtlMs).toISOString(),
  };
}

/** `_oauth.begin` of a server whose provider's tokens come from a credential broker (see the module comment). */
async function brokered(
  ctx: OAuthContext,
  body: OAuthBeginRequest,
  target: { servers: AgentServers; spec: McpConnection },
): Promise<OAuthBeginReply> {
  const { servers, spec } = target;
  const run = { tenant: body.tenant, user: body.user, session: body.session, run: body.run };
  const access = await ctx.gate.access(run, servers, spec);
  if (access.kind === 'bound') {
    return {
      status: 'bound',
      server_id: spec.server_id,
      binding_id: bindingIdOf(bindingSubject(run, servers.agent_id, spec)),
    };
  }
  const reason = access.kind === 'unavailable' ? access.reason : `the binding has no token (${access.kind})`;
  if (access.kind === 'unavailable' && access.refused === true) {
    throw refuse(OAUTH_BEGIN, 'not_oauth', `MCP server ${spec.server_id}: ${reason}`);
  }
  throw refuse(OAUTH_BEGIN, 'authorization_server_unavailable', `MCP server ${spec.server_id}: ${reason}`);
}

/** `_oauth.begin` (gate caller: the body triple must be the caller's unless admin). */
export function createBeginHandler(ctx: OAuthContext): InternalHandler {
  return serveInternal(OAUTH_BEGIN, async ({ identity, body }) => {
    requireOwnRun(identity, body, OAUTH_BEGIN.name);
    const target = await resolveServer(ctx, body);
    const provider = target.bound.provider;
    if (provider !== undefined && isBrokerUrl(provider.credential_broker)) return brokered(ctx, body, target);
    return startFlow(ctx, body, target);
  });
}

import {
  MCPServerBindingsListRequest,
  MCPServerRefreshBindingRequest,
  MCPServerRevokeBindingRequest,
  PROTOCOL_VERSION,
  SCOPES,
  ServiceError,
  ToolRevokeOAuthRequest,
} from '@ars/contracts';
import type { IdentityQuad, McpBinding, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, requireAdmin, typedMethod } from '@ars/service-kit';
import { appliesTo } from './binding-id.ts';
import type { BindingRecord } from './binding.repository.ts';
import type { OAuthContext } from './context.ts';
import { GrantUnusable, NoRefreshToken } from './grants.ts';

/**
 * The public methods over OAuth bindings: `mcp.servers.bindings.list` (R:
 * the caller's tenant; an admin sees every binding with its user and
 * session, anyone else the bindings that apply to them), and the admin
 * mutations `mcp.servers.refresh_binding`, `mcp.servers.revoke_binding`
 * and `tools.revoke_oauth`. No answer ever carries a token.
 */

const versioned = <T extends object>(result: T) => ({ ...result, protocol_version: PROTOCOL_VERSION });

const isAdmin = (identity: VerifiedIdentity) => identity.scopes.includes(SCOPES.admin);

const quadOf = (identity: VerifiedIdentity, tenant: string): IdentityQuad => ({
  tenant,
  user: identity.user,
  session: identity.session,
  run: '',
});

/** A binding as the methods show it. */
export function bindingView(ctx: OAuthContext, record: BindingRecord): McpBinding {
  const reason = ctx.grants.unusable(record);
  const state = record.state === 'active' && reason !== undefined ? 'expired' : record.state;
  return {
    binding_id: record._id,
    server_id: record.server_id,
    binding_scope: record.binding_scope,
    tenant: record.tenant,
    ...(record.user === '' ? {} : { user: record.user }),
    ...(record.session === '' ? {} : { session: record.session }),
    state,
    scopes: [...record.scopes],
    ...(record.expires_at === undefined ? {} : { expires_at: record.expires_at }),
    agent_id: record.agent_id,
    provider_name: record.provider_name,
    refreshable: record.refresh !== undefined && state === 'active',
    updated_at: record.updated_at,
  };
}

const CURSOR_PREFIX = 'b:';

function afterCursor(method: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(CURSOR_PREFIX))
    throw new ServiceError('invalid_request', `${method}: cursor is not a next_cursor of this read`);
  return decoded.slice(CURSOR_PREFIX.length);
}

/** The tenant's binding `bindingId` of `serverId`: 404 `not_found` otherwise (another tenant's too). */
async function targetBinding(ctx: OAuthContext, tenant: string, serverId: string, bindingId: string) {
  const record = await ctx.bindings.get(bindingId);
  if (record === null || record.tenant !== tenant || record.server_id !== serverId) {
    throw new ServiceError('not_found', `no binding ${bindingId} of MCP server ${serverId}`);
  }
  return record;
}

function list(ctx: OAuthContext): RpcHandler {
  return typedMethod(MCPServerBindingsListRequest, async ({ method, identity, body }) => {
    const tenant = reconcileIdentity(method, identity, body.identity).tenant;
    const after = afterCursor(method, body.cursor);
    const records = await ctx.bindings.ofTenant(
      tenant,
      body.server_id === undefined ? {} : { server_id: body.server_id },
    );
    const visible = records
      .filter((r) => isAdmin(identity) || appliesTo(r, identity))
      .filter((r) => after === undefined || r._id > after);
    const page = visible.slice(0, body.limit);
    const last = page.at(-1);
    return versioned({
      items: page.map((r) => bindingView(ctx, r)),
      ...(visible.length > body.limit && last !== undefined
        ? { next_cursor: Buffer.from(`${CURSOR_PREFIX}${last._id}`).toString('base64url') }
        : {}),
    });
  });
}

function refreshBinding(ctx: OAuthContext): RpcHandler {
  return typedMethod(MCPServerRefreshBindingRequest, async ({ method, identity, body }) => {
    const tenant = reconcileIdentity(method, identity, body.identity).tenant;
    requireAdmin(method, identity);
    const record = await targetBinding(ctx, tenant, body.server_id, body.binding_id);
    try {
      const refreshed = await ctx.grants.refresh(record._id, quadOf(identity, tenant), { strict: true });
      return versioned({ binding: bindingView(ctx, refreshed) });
    } catch (error) {
      if (error instanceof NoRefreshToken) {
        throw new ServiceError(
          'conflict',
          `binding ${record._id} holds no refresh token: the user must authorize again`,
        );
      }
      if (error instanceof GrantUnusable) {
        throw new ServiceError(
          'conflict',
          `binding ${record._id} cannot be refreshed (${error.reason}): the user must authorize again`,
        );
      }
      throw error;
    }
  });
}

function revokeBinding(ctx: OAuthContext): RpcHandler {
  return typedMethod(MCPServerRevokeBindingRequest, async ({ method, identity, body }) => {
    const tenant = reconcileIdentity(method, identity, body.identity).tenant;
    requireAdmin(method, identity);
    const record = await targetBinding(ctx, tenant, body.server_id, body.binding_id);
    if (record.state === 'revoked') return versioned({ binding_id: record._id, revoked: false });
    await ctx.grants.revoke(record._id, quadOf(identity, tenant));
    return versioned({ binding_id: record._id, revoked: true });
  });
}

function revokeOAuth(ctx: OAuthContext): RpcHandler {
  return typedMethod(ToolRevokeOAuthRequest, async ({ method, identity, body }) => {
    const tenant = reconcileIdentity(method, identity, body.identity).tenant;
    requireAdmin(method, identity);
    const records = (await ctx.bindings.ofTenant(tenant, { server_id: body.source })).filter(
      (r) => r.state !== 'revoked' && (body.binding_scope === undefined || r.binding_scope === body.binding_scope),
    );
    const actor = quadOf(identity, tenant);
    for (const record of records) await ctx.grants.revoke(record._id, actor);
    return { source: body.source, revoked: records.length, revoked_at: new Date(ctx.now()).toISOString() };
  });
}

/** The binding methods by name. */
export function createBindingHandlers(ctx: OAuthContext): Record<string, RpcHandler> {
  return {
    'mcp.servers.bindings.list': list(ctx),
    'mcp.servers.refresh_binding': refreshBinding(ctx),
    'mcp.servers.revoke_binding': revokeBinding(ctx),
    'tools.revoke_oauth': revokeOAuth(ctx),
  };
}

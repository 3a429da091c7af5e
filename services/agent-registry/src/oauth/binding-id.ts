import { createHash } from 'node:crypto';
import type { BindingScope, McpConnection } from '@ars/contracts';

/**
 * Whose grant a run uses for an OAuth-bound server: the connection's
 * `binding_scope` (default `user`) picks the tenant's one grant, the run
 * owner's, or the run's session's. Pure.
 */

/** What a binding is the grant of; `user` and `session` are '' where the scope does not name them. */
export interface BindingSubject {
  readonly tenant: string;
  readonly agent_id: string;
  readonly server_id: string;
  readonly binding_scope: BindingScope;
  readonly user: string;
  readonly session: string;
}

/** The default binding scope of a connection that names none. */
export const DEFAULT_BINDING_SCOPE: BindingScope = 'user';

/** The binding scope of `spec`. */
export function bindingScopeOf(spec: McpConnection): BindingScope {
  return spec.binding_scope ?? DEFAULT_BINDING_SCOPE;
}

/** The subject of the grant a run of `owner` uses for `spec` of `agentId`. */
export function bindingSubject(
  owner: { readonly tenant: string; readonly user: string; readonly session: string },
  agentId: string,
  spec: McpConnection,
): BindingSubject {
  const scope = bindingScopeOf(spec);
  return {
    tenant: owner.tenant,
    agent_id: agentId,
    server_id: spec.server_id,
    binding_scope: scope,
    user: scope === 'tenant' ? '' : owner.user,
    session: scope === 'session' ? owner.session : '',
  };
}

/**
 * The stable id of a binding: `mcpb_` and 32 base64url characters of the
 * SHA-256 of (tenant, agent, server, scope, user, session). The same subject
 * always gets the same id, on every replica.
 */
export function bindingIdOf(subject: BindingSubject): string {
  const parts = [
    subject.tenant,
    subject.agent_id,
    subject.server_id,
    subject.binding_scope,
    subject.user,
    subject.session,
  ];
  return `mcpb_${createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32)}`;
}

/** Whether a binding applies to `caller`: the tenant's, the caller's own user's, or the caller's session's. */
export function appliesTo(
  subject: Pick<BindingSubject, 'binding_scope' | 'user' | 'session'>,
  caller: { readonly user: string; readonly session: string },
): boolean {
  if (subject.binding_scope === 'tenant') return true;
  if (subject.user !== caller.user) return false;
  return subject.binding_scope === 'user' || subject.session === caller.session;
}

import type { IdentityTriple, MethodDef, VerifiedIdentity } from '@ars/contracts';
import type { EventSink } from '../ports.ts';
import type { ListFanIn } from './list-fan-in.ts';
import type { SearchCrossing } from './search-filter.ts';

/** The audit event every granted crossing publishes. */
export const ADMIN_SCOPE_USED = 'audit.admin_scope_used';

/** Where a failed publish is reported. */
interface AuditLog {
  error(fields: object, message: string): void;
}

type Component = 'tenant' | 'user' | 'session';

interface Audit {
  readonly method: Pick<MethodDef, 'name'>;
  readonly verified: VerifiedIdentity;
  /** The body's `identity.run`, if any: the event's run. */
  readonly run: string | undefined;
  readonly impersonating: IdentityTriple;
  readonly reason: string;
}

function grantingClaim(verified: VerifiedIdentity): string {
  return verified.scopes.includes('admin') ? 'admin' : 'console:fleet';
}

/**
 * Shape 2 of `audit.admin_scope_used` (admin or impersonation at the protocol
 * edge). Actor and Requester are both the verified caller's triple (the token
 * principal with the session the request resolved); Impersonating is the
 * identity the call reached; Reason names what crossed under which claim.
 */
export function adminScopeUsedPayload(audit: Audit): Record<string, unknown> {
  const caller = { tenant: audit.verified.tenant, user: audit.verified.user, session: audit.verified.session };
  return {
    Actor: caller,
    Requester: caller,
    Impersonating: audit.impersonating,
    Reason: audit.reason,
    Method: audit.method.name,
  };
}

/** Best effort: a failure is logged and never fails the call the crossing already authorised. */
async function publish(events: EventSink, log: AuditLog, audit: Audit): Promise<void> {
  const { verified } = audit;
  try {
    await events.publish({
      type: ADMIN_SCOPE_USED,
      identity: { tenant: verified.tenant, user: verified.user, session: verified.session, run: audit.run ?? '' },
      payload: adminScopeUsedPayload(audit),
    });
  } catch (error) {
    log.error({ err: error, method: audit.method.name, reason: audit.reason }, 'audit event could not be published');
  }
}

/** One event per body identity component crossed under a granted claim. */
export async function publishCrossings(
  events: EventSink,
  log: AuditLog,
  input: {
    readonly method: Pick<MethodDef, 'name'>;
    readonly verified: VerifiedIdentity;
    readonly target: IdentityTriple & { readonly run?: string };
    readonly crossed: readonly Component[];
  },
): Promise<void> {
  const { tenant, user, session, run } = input.target;
  await Promise.all(
    input.crossed.map((component) =>
      publish(events, log, {
        method: input.method,
        verified: input.verified,
        run,
        impersonating: { tenant, user, session },
        reason: `${component} crossed under ${grantingClaim(input.verified)}`,
      }),
    ),
  );
}

/** One event for a search.* filter reaching beyond the caller's own data; ids comma-joined per axis. */
export async function publishSearchCrossing(
  events: EventSink,
  log: AuditLog,
  input: {
    readonly method: Pick<MethodDef, 'name'>;
    readonly verified: VerifiedIdentity;
    readonly run: string | undefined;
    readonly filter: SearchCrossing;
  },
): Promise<void> {
  const { filter } = input;
  await publish(events, log, {
    method: input.method,
    verified: input.verified,
    run: input.run,
    impersonating: {
      tenant: filter.tenant_ids.join(','),
      user: filter.user_ids.join(','),
      session: (filter.session_ids ?? []).join(','),
    },
    reason: `${filter.axes.map((axis) => `filter.${axis}`).join(', ')} crossed under ${grantingClaim(input.verified)}`,
  });
}

/**
 * One event for a tenant fan-in of a list read (`filter.tenant_ids` of
 * `tasks.list`, `pause.list`, `flows.list`, `flows.runs.list`, `agents.list`;
 * `filter.all_tenants` of `agents.list`): every user and session of the
 * tenants reached, so Impersonating is the tenants comma-joined (`*` for
 * every tenant) with user and session `*`.
 */
export async function publishListFanIn(
  events: EventSink,
  log: AuditLog,
  input: {
    readonly method: Pick<MethodDef, 'name'>;
    readonly verified: VerifiedIdentity;
    readonly run: string | undefined;
    readonly fanIn: ListFanIn;
  },
): Promise<void> {
  const { tenants, axis } = input.fanIn;
  await publish(events, log, {
    method: input.method,
    verified: input.verified,
    run: input.run,
    impersonating: { tenant: tenants === '*' ? '*' : tenants.join(','), user: '*', session: '*' },
    reason: `filter.${axis} crossed under ${grantingClaim(input.verified)}`,
  });
}

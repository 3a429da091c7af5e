import { IDENTITY_COMPONENTS, canFanIn, reconcileBodyIdentity } from '@ars/auth';
import type { ReconciledIdentity } from '@ars/auth';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';
import { publishCrossings, publishListFanIn, publishSearchCrossing } from '../http/audit.ts';
import { authorizeMethod } from '../http/authorize.ts';
import { enforceBodyDepth, enforcePayloadBounds, validateRequest } from '../http/request-body.ts';
import { checkListFanIn } from '../http/list-fan-in.ts';
import { checkSearchFilter } from '../http/search-filter.ts';
import type { EventSink } from '../ports.ts';

/** Where a failed audit publish is reported. */
interface GateLog {
  error(fields: object, message: string): void;
}

/**
 * The checks of a request body after authentication, authorization first so
 * that a caller who may not call a method learns nothing about its body:
 * the body's identity members
 * alone and the method's claims ({@link gateIdentity}: 401/403/404; a body
 * that does not parse is refused 400 only to a caller the claims admit), then control payload bounds (422),
 * nesting depth (400), request schema (400, bodies of GET methods are not
 * validated), the full identity reconciliation, search filter folding and
 * the tenant fan-in of list reads (XA and agents.list's X; 403), then the audit of granted
 * crossings. Answers the reconciled identity.
 */
export async function gateBody(
  events: EventSink,
  log: GateLog,
  method: MethodDef,
  verified: VerifiedIdentity,
  body: Record<string, unknown>,
): Promise<ReconciledIdentity> {
  gateIdentity(method, verified, body);
  enforcePayloadBounds(method, body);
  enforceBodyDepth(body);
  if (method.httpMethod !== 'GET') validateRequest(method, body);
  const { identity, crossed } = reconcileBodyIdentity({
    verified,
    body: body.identity as IdentityScope | undefined,
    method,
  });
  const searchCrossing = checkSearchFilter(method, verified, body);
  const fanIn = checkListFanIn(method, verified, body);
  if (crossed.length > 0) {
    await publishCrossings(events, log, { method, verified, target: identity, crossed });
  }
  if (fansAcrossTenant(method, verified, body)) {
    // An omitted user with the claim reads every user of the tenant: a
    // crossing of the user axis even though the body changed nothing.
    await publishCrossings(events, log, { method, verified, target: { ...identity, user: '*' }, crossed: ['user'] });
  }
  if (searchCrossing !== undefined) {
    await publishSearchCrossing(events, log, { method, verified, run: identity.run, filter: searchCrossing });
  }
  if (fanIn !== undefined) {
    await publishListFanIn(events, log, { method, verified, run: identity.run, fanIn });
  }
  return identity;
}

/**
 * The gate's decisions that need only the claims and the body's identity
 * members, before anything else of the body is looked at: method claims,
 * then reconciliation of the identity members that are strings (a member of
 * another type is the schema's to refuse, with 400, once the caller has
 * passed). Also used on a body read only in part (an artifacts.put whose
 * bytes are still arriving). Throws what the full gate would.
 */
export function gateIdentity(method: MethodDef, verified: VerifiedIdentity, partial: Record<string, unknown>): void {
  const identity = partial.identity;
  if (identity !== null && typeof identity === 'object' && !Array.isArray(identity)) {
    const members: Record<string, string> = {};
    for (const component of IDENTITY_COMPONENTS) {
      const value = (identity as Record<string, unknown>)[component];
      if (typeof value === 'string') members[component] = value;
    }
    // A crossing the caller may not make is refused first, with the surface's own code (scope_mismatch, not_found).
    reconcileBodyIdentity({ verified, body: members, method });
  }
  authorizeMethod(method, verified);
}

/**
 * True when the call fans across every user of the tenant: a method whose
 * user axis may cross (artifacts.list), called by a claim holder who omitted
 * `identity.user`.
 */
function fansAcrossTenant(method: MethodDef, verified: VerifiedIdentity, body: Record<string, unknown>): boolean {
  const claim = method.crossing?.user;
  if (claim === undefined || claim === 'never') return false;
  const sent = body.identity as IdentityScope | undefined;
  return sent?.user === undefined && canFanIn(verified.scopes, claim);
}

/** The method whose owner tells an omitted `user` (fan across the tenant) from a named one. */
const USER_AS_SENT = 'artifacts.list';

/**
 * The body an owner receives: the caller's members with the reconciled
 * identity. artifacts.list keeps the body's `user` exactly as the caller sent
 * it (absent stays absent): with admin or console:fleet an omitted user fans
 * across the tenant, a named one (even the caller's own) reads that user.
 */
export function forwardedBody(
  method: Pick<MethodDef, 'name'>,
  body: Record<string, unknown>,
  identity: ReconciledIdentity,
): Record<string, unknown> {
  if (method.name !== USER_AS_SENT) return { ...body, identity };
  const sent = body.identity as IdentityScope | undefined;
  const { user, ...rest } = identity;
  return { ...body, identity: sent?.user === undefined ? rest : { ...rest, user } };
}

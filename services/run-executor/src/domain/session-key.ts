/** The (tenant, user, session) a record or a cache entry belongs to. */
export interface SessionOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * One string for a session's triple: `JSON.stringify([tenant, user, session])`,
 * so no choice of identifiers makes two triples collide. Documents keyed by it
 * (run overrides, run-state session records, erased-session markers) depend on
 * this exact form.
 */
export function sessionKey(owner: SessionOwner): string {
  return JSON.stringify([owner.tenant, owner.user, owner.session]);
}

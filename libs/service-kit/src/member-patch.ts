/**
 * Partial writes of a flat settings record (tenant LLM overrides, a
 * session's run overrides): in a write, a member's value sets it, `null`
 * clears it, and an absent member is left as stored.
 */

/** The members a write sets (without `null`), by name. */
export type PatchValues<W, M extends keyof W> = { [K in M]?: Exclude<W[K], null | undefined> };

/** A write split into members to set and members to clear; absent members are in neither. */
export interface MemberPatch<W, M extends keyof W & string> {
  readonly set: PatchValues<W, M>;
  readonly clear: readonly M[];
  /** Members the write named (set or cleared), e.g. for an event's `Set*` flags. */
  readonly touched: ReadonlySet<M>;
}

/** Splits `write` over `members` (other members of it are ignored): a value sets a member, `null` clears it, absent leaves it. */
export function splitPatch<W extends object, M extends keyof W & string>(
  write: W,
  members: readonly M[],
): MemberPatch<W, M> {
  const set: Record<string, unknown> = {};
  const clear: M[] = [];
  const touched = new Set<M>();
  for (const member of members) {
    const value = write[member];
    if (value === undefined) continue;
    touched.add(member);
    if (value === null) clear.push(member);
    else set[member] = value;
  }
  return { set: set as PatchValues<W, M>, clear, touched };
}

/** The stored record after `patch`: its set members replaced, its cleared members removed (a pure mirror of the store update). */
export function applyPatch<V extends object>(
  current: V,
  patch: { readonly set: object; readonly clear: readonly PropertyKey[] },
): V {
  const next: Record<PropertyKey, unknown> = { ...(current as Record<PropertyKey, unknown>), ...patch.set };
  for (const member of patch.clear) delete next[member];
  return next as V;
}

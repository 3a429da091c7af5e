import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MEMORY_TIERS } from '@ars/contracts';
import type { MemoryItem, MemoryTier } from '@ars/contracts';

/** The (tenant, user, session) a memory operation acts for. */
export interface Owner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * One memory item as stored. `user` is `''` on the tenant tier and `session`
 * is `''` except on the session tier, so one shape serves all three. The
 * value is kept as its JSON text: any JSON member name survives every backend.
 */
export interface MemoryRecord {
  /** Derived from (tenant, tier, user, session, key): see {@link recordId}. */
  _id: string;
  tenant: string;
  tier: MemoryTier;
  user: string;
  session: string;
  key: string;
  value_json: string;
  /** UTF-8 bytes of `value_json`. */
  size_bytes: number;
  /** 1 on the first put, +1 on each later one. */
  version: number;
  created_at: string;
  updated_at: string;
}

/** Where an item of `tier` and `key` lives for `owner`. */
export interface RecordAddress {
  readonly _id: string;
  readonly tenant: string;
  readonly tier: MemoryTier;
  readonly user: string;
  readonly session: string;
  readonly key: string;
}

/** The stable id of an item: the tier and a SHA-256 of its full address. */
export function recordId(tenant: string, tier: MemoryTier, user: string, session: string, key: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([tenant, tier, user, session, key]))
    .digest('hex');
  return `${tier}:${digest}`;
}

/** The address of `key` on `tier` for `owner`: tenant-wide, the owner's user, or the owner's session. */
export function addressOf(owner: Owner, tier: MemoryTier, key: string): RecordAddress {
  const user = tier === 'tenant' ? '' : owner.user;
  const session = tier === 'session' ? owner.session : '';
  return { _id: recordId(owner.tenant, tier, user, session, key), tenant: owner.tenant, tier, user, session, key };
}

const StoredRecord = z.object({
  _id: z.string().min(1),
  tenant: z.string().min(1),
  tier: z.enum(MEMORY_TIERS),
  user: z.string(),
  session: z.string(),
  key: z.string().min(1),
  value_json: z.string(),
  size_bytes: z.int().nonnegative(),
  version: z.int().positive(),
  created_at: z.string().min(1),
  updated_at: z.string().min(1),
});

/** A loaded document: a record, or why it is corrupt. */
export type CheckedRecord =
  { readonly ok: true; readonly record: MemoryRecord } | { readonly ok: false; readonly reason: string };

function shapeProblem(doc: unknown): string | undefined {
  const parsed = StoredRecord.safeParse(doc);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return issue === undefined
    ? 'malformed record'
    : `${issue.path.map(String).join('.') || '(record)'}: ${issue.message}`;
}

function consistencyProblem(record: MemoryRecord): string | undefined {
  if ((record.tier === 'tenant') !== (record.user === '')) return 'user does not match the tier';
  if ((record.tier === 'session') !== (record.session !== '')) return 'session does not match the tier';
  if (record._id !== recordId(record.tenant, record.tier, record.user, record.session, record.key)) {
    return 'id does not match the address';
  }
  try {
    JSON.parse(record.value_json);
  } catch {
    return 'value is not valid JSON';
  }
  if (Buffer.byteLength(record.value_json) !== record.size_bytes) return 'size_bytes does not match the value';
  return undefined;
}

/** Checks a document read from the store; anything but a whole, consistent record is corrupt. */
export function checkRecord(doc: unknown): CheckedRecord {
  const problem = shapeProblem(doc) ?? consistencyProblem(doc as MemoryRecord);
  return problem === undefined ? { ok: true, record: doc as MemoryRecord } : { ok: false, reason: problem };
}

/** The wire item of a record. */
export function toItem(record: MemoryRecord): MemoryItem {
  return {
    key: record.key,
    tier: record.tier,
    value: JSON.parse(record.value_json) as unknown,
    tenant: record.tenant,
    ...(record.user === '' ? {} : { user: record.user }),
    ...(record.session === '' ? {} : { session: record.session }),
    size_bytes: record.size_bytes,
    version: record.version,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

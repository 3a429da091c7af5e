import type { Collection, Filter, Store } from '@ars/store';
import type { ArtifactRecord, Owner } from '../domain/artifact.ts';
import { literalPattern, pageOf } from '@ars/service-kit';
import type { PageOf } from '@ars/service-kit';

/** The scope and narrowing of an artifacts.list read (already folded). */
export interface ArtifactListQuery {
  readonly tenant: string;
  /** Absent: every user of the tenant. */
  readonly user?: string | undefined;
  /** Absent: every session in scope. */
  readonly session?: string | undefined;
  readonly namespace?: string | undefined;
  readonly source?: string | undefined;
  readonly mime_type?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** The scope of a search.artifacts read (already folded) and its free text. */
export interface ArtifactSearchQuery {
  readonly tenant_ids: readonly string[];
  readonly user_ids: readonly string[];
  /** Absent: every session in scope. */
  readonly session_ids?: readonly string[] | undefined;
  /** Case-insensitive substring of the name, artifact id, MIME type, namespace or source. */
  readonly text?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** Artifact metadata storage. */
export interface ArtifactRepository {
  insert(record: ArtifactRecord): Promise<void>;
  findById(artifactId: string): Promise<ArtifactRecord | null>;
  /** Newest first. */
  list(query: ArtifactListQuery): Promise<PageOf<ArtifactRecord>>;
  /** Newest first. */
  search(query: ArtifactSearchQuery): Promise<PageOf<ArtifactRecord>>;
  /** Every artifact of exactly this (tenant, user, session). */
  findBySession(owner: Owner): Promise<ArtifactRecord[]>;
  /** True when a record names `blobKey`. */
  hasBlob(blobKey: string): Promise<boolean>;
  /** False when there was nothing to delete. */
  delete(artifactId: string): Promise<boolean>;
}

export const ARTIFACTS_COLLECTION = 'artifacts';

function timeWindow(since: string | undefined, until: string | undefined): Filter<ArtifactRecord> {
  if (since === undefined && until === undefined) return {};
  return {
    created_at: { ...(since === undefined ? {} : { $gte: since }), ...(until === undefined ? {} : { $lt: until }) },
  };
}

function listFilter(query: ArtifactListQuery): Filter<ArtifactRecord> {
  const filter: Filter<ArtifactRecord> = { tenant: query.tenant, ...timeWindow(query.since, query.until) };
  if (query.user !== undefined) filter.user = query.user;
  if (query.session !== undefined) filter.session = query.session;
  if (query.namespace !== undefined) filter.namespace = query.namespace;
  if (query.source !== undefined) filter.source = query.source;
  if (query.mime_type !== undefined) filter.mime_type = query.mime_type;
  return filter;
}

function searchFilter(query: ArtifactSearchQuery): Filter<ArtifactRecord> {
  const filter: Filter<ArtifactRecord> = {
    tenant: { $in: query.tenant_ids },
    user: { $in: query.user_ids },
    ...timeWindow(query.since, query.until),
  };
  if (query.session_ids !== undefined) filter.session = { $in: query.session_ids };
  if (query.text !== undefined) {
    const match = { $regex: literalPattern(query.text), $options: 'i' };
    filter.$or = [
      { name: match },
      { artifact_id: match },
      { mime_type: match },
      { namespace: match },
      { source: match },
    ];
  }
  return filter;
}

/** The store-backed repository; call {@link ArtifactRepository} methods only after `ensureIndexes`. */
export function createArtifactRepository(store: Store): ArtifactRepository & { ensureIndexes(): Promise<void> } {
  const artifacts: Collection<ArtifactRecord> = store.collection<ArtifactRecord>(ARTIFACTS_COLLECTION);
  const newestFirst = (limit: number, cursor: string | undefined) => ({
    sortField: 'created_at',
    direction: 'desc' as const,
    limit,
    after: cursor,
  });
  return {
    async ensureIndexes() {
      await artifacts.createIndex({ tenant: 1, user: 1, session: 1 });
      await artifacts.createIndex({ created_at: -1 });
      await artifacts.createIndex({ blob_key: 1 }, { unique: true });
    },
    async insert(record) {
      await artifacts.insertOne(record);
    },
    findById: (artifactId) => artifacts.findOne({ _id: artifactId }),
    list: (query) => pageOf(artifacts, listFilter(query), newestFirst(query.limit, query.cursor)),
    search: (query) => pageOf(artifacts, searchFilter(query), newestFirst(query.limit, query.cursor)),
    findBySession: (owner) => artifacts.find({ tenant: owner.tenant, user: owner.user, session: owner.session }),
    async hasBlob(blobKey) {
      return (await artifacts.countDocuments({ blob_key: blobKey })) > 0;
    },
    async delete(artifactId) {
      return (await artifacts.deleteOne({ _id: artifactId })).deletedCount > 0;
    },
  };
}

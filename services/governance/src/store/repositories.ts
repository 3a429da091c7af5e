import type { Store } from '@ars/store';
import { createBucketRepository } from './bucket.repository.ts';
import type { BucketRepository } from './bucket.repository.ts';
import { createOverridesRepository } from './overrides.repository.ts';
import type { OverridesRepository } from './overrides.repository.ts';
import { createPostureRepository } from './posture.repository.ts';
import type { PostureRepository } from './posture.repository.ts';
import { createProviderHealthRepository } from './provider-health.repository.ts';
import type { ProviderHealthRepository } from './provider-health.repository.ts';
import { createProviderKeyRepository } from './provider-key.repository.ts';
import type { ProviderKeyRepository } from './provider-key.repository.ts';
import { createSpendRepository, RECEIPT_INDEX } from './spend.repository.ts';
import type { SpendRepository } from './spend.repository.ts';
import { createTokenRotationRepository } from './token-rotation.repository.ts';
import type { TokenRotationRepository } from './token-rotation.repository.ts';

/** Every repository of the governance service. */
export interface Repositories {
  readonly posture: PostureRepository;
  readonly overrides: OverridesRepository;
  readonly keys: ProviderKeyRepository;
  readonly spend: SpendRepository;
  readonly buckets: BucketRepository;
  readonly health: ProviderHealthRepository;
  readonly rotations: TokenRotationRepository;
}

/** Indexes of the tenant-scoped reads (posture figures) and of the receipt pruning; idempotent. */
async function ensureIndexes(store: Store): Promise<void> {
  await Promise.all([
    store.collection('provider_keys').createIndex({ tenant: 1 }),
    store.collection('spend_windows').createIndex({ tenant: 1 }),
    // The layout before the windows documents, still read until each (tenant, tier) has one.
    store.collection('spend').createIndex({ tenant: 1, period_start: 1 }),
    store.collection('rate_buckets').createIndex({ tenant: 1 }),
    store.collection('provider_health').createIndex({ tenant: 1 }),
    store.collection('cost_calls').createIndex(RECEIPT_INDEX),
  ]);
}

/** Builds every repository on the service's store, once its indexes exist. */
export async function createRepositories(store: Store): Promise<Repositories> {
  await ensureIndexes(store);
  return {
    posture: createPostureRepository(store),
    overrides: createOverridesRepository(store),
    keys: createProviderKeyRepository(store),
    spend: createSpendRepository(store),
    buckets: createBucketRepository(store),
    health: createProviderHealthRepository(store),
    rotations: createTokenRotationRepository(store),
  };
}

import type { EventPublisher } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { CurrencyRates } from '../domain/currency.ts';
import type { KeyEncryptionKey } from '../secrets/key-encryption-key.ts';
import type { Repositories } from '../store/repositories.ts';
import type { RevocationWriter } from '../store/revocations.kv.ts';

/** What every handler of the governance service works with. */
export interface GovernanceContext {
  readonly repos: Repositories;
  readonly publisher: EventPublisher;
  readonly revocations: RevocationWriter;
  readonly kek: KeyEncryptionKey;
  /** Budget currencies' rates per USD (USD = 1). */
  readonly rates: CurrencyRates;
  /** How long a provider stays unhealthy after a failover away from it, in ms (0: never). */
  readonly healthWindowMs: number;
  readonly logger: Logger;
  /** Epoch milliseconds now. */
  readonly now: () => number;
}

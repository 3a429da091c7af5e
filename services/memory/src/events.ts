import type { EventPublisher, PublishEventInput } from '@ars/bus';
import type { MemoryHealth } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { Owner } from './domain/memory-record.ts';

/**
 * The identity of service-level memory events (`memory.health_changed`,
 * `memory.recovery_dropped`): they concern no caller, so they are visible to
 * admin and console:fleet fan-in only.
 */
export const MEMORY_SYSTEM_IDENTITY: Owner = Object.freeze({ tenant: '_system', user: 'memory', session: '_memory' });

/** The memory events with their exact payload keys. */
export interface MemoryEvents {
  itemPut(owner: Owner, operation: string, key: string): Promise<void>;
  itemDeleted(owner: Owner, operation: string, key: string): Promise<void>;
  identityRejected(owner: Owner, operation: string, reason: string): Promise<void>;
  healthChanged(prior: MemoryHealth, next: MemoryHealth, reason: string): Promise<void>;
  callerBlockAdmitted(
    owner: Owner & { run?: string | undefined },
    block: { bytes: number; tier: string; key: string },
  ): Promise<void>;
  recoveryDropped(reason: string): Promise<void>;
}

/**
 * Publishes memory events. A failed publish is logged, never thrown: each
 * event reports something that already happened (a stored write, a refusal,
 * a health flip), and failing the caller would not undo it.
 */
export function createMemoryEvents(publisher: EventPublisher, logger: Logger): MemoryEvents {
  const publish = async (event: PublishEventInput): Promise<void> => {
    try {
      await publisher.publish(event);
    } catch (error) {
      logger.error({ err: error, eventType: event.type }, 'memory event publish failed');
    }
  };
  const triple = ({ tenant, user, session }: Owner) => ({ tenant, user, session });
  return {
    itemPut: (owner, operation, key) =>
      publish({ type: 'memory.item_put', identity: triple(owner), payload: { Operation: operation, Key: key } }),
    itemDeleted: (owner, operation, key) =>
      publish({ type: 'memory.item_deleted', identity: triple(owner), payload: { Operation: operation, Key: key } }),
    identityRejected: (owner, operation, reason) =>
      publish({
        type: 'memory.identity_rejected',
        identity: triple(owner),
        payload: { Operation: operation, Reason: reason },
      }),
    healthChanged: (prior, next, reason) =>
      publish({
        type: 'memory.health_changed',
        identity: MEMORY_SYSTEM_IDENTITY,
        payload: { PriorHealth: prior, NewHealth: next, Reason: reason },
      }),
    callerBlockAdmitted: (owner, block) =>
      publish({
        type: 'memory.caller_block_admitted',
        identity: { ...triple(owner), ...(owner.run === undefined ? {} : { run: owner.run }) },
        payload: { bytes: block.bytes, tier: block.tier, key: block.key },
      }),
    recoveryDropped: (reason) =>
      publish({ type: 'memory.recovery_dropped', identity: MEMORY_SYSTEM_IDENTITY, payload: { Reason: reason } }),
  };
}

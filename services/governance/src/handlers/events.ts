import type { GovernanceEvent } from '../domain/admission.ts';

/** An event to publish, optionally with a fixed id (a retry publishing it again is dropped as a duplicate). */
export type PublishableEvent = GovernanceEvent & { readonly eventId?: string };
import type { GovernanceContext } from './context.ts';

/** The frame identity of an event: the run's quad, or the actor's triple with no run. */
export interface EventIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run?: string;
}

/**
 * Publishes events in order. Best effort: the state change or decision they
 * report has happened, so a publish failure is logged at error and never
 * turns the call into a failure.
 */
export async function publishEvents(
  ctx: GovernanceContext,
  identity: EventIdentity,
  events: readonly (PublishableEvent | undefined)[],
): Promise<void> {
  for (const event of events) {
    if (event === undefined) continue;
    try {
      await ctx.publisher.publish({
        type: event.type,
        identity,
        payload: event.payload,
        ...(event.eventId === undefined ? {} : { eventId: event.eventId }),
      });
    } catch (error) {
      ctx.logger.error(
        { err: error, eventType: event.type, tenant: identity.tenant },
        'governance event not published',
      );
    }
  }
}

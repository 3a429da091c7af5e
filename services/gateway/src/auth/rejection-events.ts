import type { Logger } from '@ars/telemetry';
import type { EventSink, VerifiedClaims } from '../ports.ts';

/** The event a refused token publishes. */
export const AUTH_REJECTED = 'auth.rejected';

/** Options of {@link createRejectionReporter}. */
export interface RejectionReporterOptions {
  readonly events: EventSink;
  readonly logger: Logger;
  /** One event per token per window: a client retrying a revoked token does not flood the stream. @default 60000 */
  readonly windowMs?: number;
  /** Tokens remembered for the window. @default 10000 */
  readonly maxRemembered?: number;
  /** Milliseconds clock. @default Date.now */
  readonly now?: () => number;
}

/** What a refused, but verified, token says about itself. */
export interface RefusedToken {
  readonly fingerprint: string;
  readonly claims: VerifiedClaims;
  /** The session the request resolved (header, else claim), `''` when none. */
  readonly session: string;
}

/** Publishes `auth.rejected` for a verified token refused after verification. */
export interface RejectionReporter {
  /** Best effort and never awaited by the refusal: a failure is logged. */
  revoked(token: RefusedToken): void;
}

/**
 * `auth.rejected {Reason: 'revoked', KID, Issuer, Subject}` under the
 * token's own (tenant, user, session): the signature verified, so the
 * identity is the token's, and its owner sees the refusal in their stream.
 * Deduplicated per token fingerprint within `windowMs`.
 */
export function createRejectionReporter(options: RejectionReporterOptions): RejectionReporter {
  const windowMs = options.windowMs ?? 60_000;
  const maxRemembered = options.maxRemembered ?? 10_000;
  const now = options.now ?? Date.now;
  const lastPublished = new Map<string, number>();
  return {
    revoked({ fingerprint, claims, session }) {
      const at = now();
      const previous = lastPublished.get(fingerprint);
      if (previous !== undefined && at - previous < windowMs) return;
      lastPublished.delete(fingerprint);
      lastPublished.set(fingerprint, at);
      if (lastPublished.size > maxRemembered) lastPublished.delete(lastPublished.keys().next().value as string);
      options.events
        .publish({
          type: AUTH_REJECTED,
          identity: { tenant: claims.tenant, user: claims.user, session, run: '' },
          payload: { Reason: 'revoked', KID: claims.kid ?? '', Issuer: claims.iss ?? '', Subject: claims.sub ?? '' },
        })
        .catch((error: unknown) => {
          options.logger.error({ err: error, tenant: claims.tenant }, 'auth.rejected could not be published');
        });
    },
  };
}

import type { MemoryHealth } from '@ars/contracts';

/** What one health check observed. */
export interface HealthObservation {
  /** The store probe's failure, when it failed. */
  readonly probeError?: string | undefined;
  /** How long the probe took, in milliseconds. */
  readonly probeMs: number;
  /** Corrupt records dropped since the previous check. */
  readonly droppedSinceLastCheck: number;
}

/** A health value and the reason for it. */
export interface HealthAssessment {
  readonly health: MemoryHealth;
  readonly reason: string;
}

/**
 * The memory service's health from one observation: `unavailable` when the
 * store does not answer; `degraded` when it answers slower than `slowMs` or
 * corrupt records were dropped since the last check; else `healthy`.
 */
export function assessHealth(observation: HealthObservation, slowMs: number): HealthAssessment {
  if (observation.probeError !== undefined) {
    return { health: 'unavailable', reason: `store did not answer: ${observation.probeError}` };
  }
  const ms = Math.round(observation.probeMs);
  if (observation.droppedSinceLastCheck > 0) {
    const n = observation.droppedSinceLastCheck;
    return {
      health: 'degraded',
      reason: `dropped ${n} corrupt memory record${n === 1 ? '' : 's'} since the last check`,
    };
  }
  if (observation.probeMs > slowMs) {
    return { health: 'degraded', reason: `store answered in ${ms} ms (slower than ${slowMs} ms)` };
  }
  return { health: 'healthy', reason: `store answered in ${ms} ms` };
}

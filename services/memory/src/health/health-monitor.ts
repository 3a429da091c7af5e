import type { MemoryHealth } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { assessHealth } from '../domain/health.ts';
import type { HealthAssessment } from '../domain/health.ts';
import type { MemoryEvents } from '../events.ts';

/** Options of {@link createHealthMonitor}. */
export interface HealthMonitorOptions {
  /** A cheap store round trip; throws when the store does not answer. */
  readonly probe: () => Promise<void>;
  readonly events: MemoryEvents;
  readonly logger: Logger;
  /** MEMORY_HEALTH_SLOW_MS. */
  readonly slowMs: number;
}

/** The service's health as last checked. */
export interface HealthMonitor {
  /** Probes the store, assesses, and publishes `memory.health_changed` when the value flipped. */
  check(): Promise<HealthAssessment>;
  /** Counts corrupt records dropped on load; the next check reports `degraded`. */
  noteDropped(count: number): void;
  current(): MemoryHealth;
  /** Checks every `intervalMs` until the returned function is called. */
  every(intervalMs: number): () => Promise<void>;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Tracks the memory service's health. It starts `healthy` (the boot path
 * reached the store) and only a check that assesses a different value
 * publishes `memory.health_changed {PriorHealth, NewHealth, Reason}`.
 * Checks run one at a time.
 */
export function createHealthMonitor(options: HealthMonitorOptions): HealthMonitor {
  let current: MemoryHealth = 'healthy';
  let dropped = 0;
  let running: Promise<HealthAssessment> | undefined;

  const runCheck = async (): Promise<HealthAssessment> => {
    const started = performance.now();
    let probeError: string | undefined;
    try {
      await options.probe();
    } catch (error) {
      probeError = errorText(error);
    }
    const observed = { probeError, probeMs: performance.now() - started, droppedSinceLastCheck: dropped };
    dropped = 0;
    const assessment = assessHealth(observed, options.slowMs);
    if (assessment.health !== current) {
      const prior = current;
      current = assessment.health;
      options.logger.warn({ prior, next: current, reason: assessment.reason }, 'memory health changed');
      await options.events.healthChanged(prior, current, assessment.reason);
    }
    return assessment;
  };

  const check = (): Promise<HealthAssessment> => {
    running ??= runCheck().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    check,
    noteDropped(count) {
      dropped += count;
    },
    current: () => current,
    every(intervalMs) {
      const timer = setInterval(() => {
        check().catch((error: unknown) => options.logger.warn({ err: error }, 'memory health check failed'));
      }, intervalMs);
      timer.unref();
      return async () => {
        clearInterval(timer);
        await running?.catch(() => undefined);
      };
    },
  };
}

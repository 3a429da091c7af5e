import type { Bus } from '@ars/bus';
import type { Store } from '@ars/store';
import { checkDependencies, DEFAULT_CHECK_TIMEOUT_MS } from './health.ts';
import type { DependencyChecks } from './health.ts';

/** What `GET /readyz` reports: `ready`, or why not. */
export type ReadinessStatus = 'ready' | 'starting' | 'stopping' | 'unavailable';

/** One readiness answer. */
export interface Readiness {
  readonly status: ReadinessStatus;
  /** Each dependency checked; empty while starting or stopping (nothing is checked then). */
  readonly checks: Partial<DependencyChecks>;
}

/** A service's readiness through its life: starting, then serving, then stopping. */
export interface ReadinessTracker {
  /** The service serves its methods: from now on readiness checks `bus` and `store`. */
  serving(dependencies: { readonly bus: Bus; readonly store: Store }): void;
  /** The service began to stop: never ready again. */
  stopping(): void;
  /** The current answer. Never rejects; concurrent calls share one round of checks. */
  check(): Promise<Readiness>;
}

/** Options of {@link trackReadiness}. */
export interface ReadinessOptions {
  /** How long each dependency check may take, in milliseconds. @default 2000 */
  readonly checkTimeoutMs?: number;
}

const STARTING: Readiness = Object.freeze({ status: 'starting', checks: Object.freeze({}) });
const STOPPING: Readiness = Object.freeze({ status: 'stopping', checks: Object.freeze({}) });

/**
 * Tracks whether a service is ready for traffic: not while it starts, not
 * once it stops, and in between only while NATS is up and the store answers
 * (the `_health` checks, each bounded by its timeout).
 */
export function trackReadiness(options: ReadinessOptions = {}): ReadinessTracker {
  const timeoutMs = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let dependencies: { readonly bus: Bus; readonly store: Store } | undefined;
  let stopped = false;
  let inFlight: Promise<Readiness> | undefined;

  const runChecks = async (bus: Bus, store: Store): Promise<Readiness> => {
    try {
      const checks = await checkDependencies(bus, store, timeoutMs);
      if (stopped) return STOPPING;
      const ready = checks.nats === 'ok' && checks.store === 'ok';
      return { status: ready ? 'ready' : 'unavailable', checks };
    } catch {
      return stopped ? STOPPING : { status: 'unavailable', checks: {} };
    }
  };

  return {
    serving(deps) {
      dependencies = deps;
    },
    stopping() {
      stopped = true;
    },
    check() {
      if (stopped) return Promise.resolve(STOPPING);
      if (dependencies === undefined) return Promise.resolve(STARTING);
      inFlight ??= runChecks(dependencies.bus, dependencies.store).finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
  };
}

import type { Logger } from '@ars/telemetry';

/** A background job run every interval. */
export interface PeriodicJob {
  /** Runs one pass now (after the one in flight, if any). */
  runNow(): Promise<void>;
  /** Stops scheduling and waits for the pass in flight. */
  stop(): Promise<void>;
}

/** Options of {@link startPeriodic}. */
export interface PeriodicOptions {
  readonly name: string;
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Run a first pass at once instead of after one interval. @default false */
  readonly runAtStart?: boolean;
}

/**
 * Runs `pass` every `intervalMs`, never two at once (the next pass is
 * scheduled when one ends). A failed pass is logged; the next one retries.
 * Timers are unref'd: a forgotten stop does not keep the process alive.
 */
export function startPeriodic(pass: () => Promise<void>, options: PeriodicOptions): PeriodicJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const runPass = (): Promise<void> => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        await pass();
      } catch (error) {
        options.logger.error({ err: error, job: options.name }, 'background pass failed');
      }
    });
    return running;
  };

  const schedule = (delay: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void runPass().then(() => schedule(options.intervalMs));
    }, delay).unref();
  };

  schedule(options.runAtStart === true ? 0 : options.intervalMs);
  return {
    runNow: runPass,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

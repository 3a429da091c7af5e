import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsServerHandle } from '@ars/bus';
import { isAlive, restartLocalNats } from './local-nats.ts';
import type { LocalNatsOptions } from './local-nats.ts';
import type { RestartPolicy } from './system-options.ts';

/** Holds the system's own nats-server and, once asked, keeps it running. */
export interface NatsKeeper {
  /** The server running now (a new handle after a restart). */
  current(): NatsServerHandle;
  /**
   * Watches the server: when it dies it is started again on the same port
   * and store (the services reconnect by themselves), with the policy's
   * backoff, giving up after its crash limit.
   */
  watch(policy: RestartPolicy): void;
  /** Stops watching, then stops the server. */
  stop(): Promise<void>;
}

/** How often the server's process is checked, in ms. */
const CHECK_INTERVAL_MS = 500;

export function keepLocalNats(
  initial: NatsServerHandle,
  dataDir: string,
  options: LocalNatsOptions,
  log: (level: 'info' | 'error', message: string) => void,
): NatsKeeper {
  let nats = initial;
  let timer: NodeJS.Timeout | undefined;
  let restarting = false;
  let stopped = false;
  let attempts = 0;

  async function restart(dead: NatsServerHandle, policy: RestartPolicy): Promise<void> {
    restarting = true;
    try {
      while (!stopped) {
        attempts++;
        if (attempts > policy.maxConsecutiveCrashes) {
          log(
            'error',
            `nats-server is down and could not be restarted ${policy.maxConsecutiveCrashes} times; stop with Ctrl-C`,
          );
          clearInterval(timer);
          return;
        }
        const delayMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempts - 1));
        log('error', `nats-server (pid ${dead.pid}) exited; restarting it on port ${dead.port} in ${delayMs / 1000}s`);
        await sleep(delayMs);
        if (stopped) return;
        try {
          nats = await restartLocalNats(dataDir, dead.port, options);
          log('info', 'nats-server restarted; the services reconnect by themselves');
          const restarted = nats;
          setTimeout(() => {
            if (nats === restarted && isAlive(restarted.pid)) attempts = 0;
          }, policy.stableAfterMs).unref();
          return;
        } catch (error) {
          log('error', `nats-server could not be restarted: ${(error as Error).message}`);
        }
      }
    } finally {
      restarting = false;
    }
  }

  return {
    current: () => nats,
    watch(policy) {
      timer = setInterval(() => {
        if (stopped || restarting || isAlive(nats.pid)) return;
        void restart(nats, policy);
      }, CHECK_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await nats.stop();
    },
  };
}

import type { Bus } from './connection.ts';
import { utf8 } from './utf8.ts';

/**
 * Notices that something a run's effective configuration is resolved from
 * changed (an agent's revision, a user variant, session settings, skills,
 * approval policies, a retirement, the tenant's LLM overrides), so that
 * whoever keeps resolved configurations drops them. Core NATS, not
 * JetStream: a notice is at most once, so a watcher also starts afresh
 * whenever its own connection drops, and keeps nothing longer than a bound
 * of its own; an announcer announces again once its connection is back,
 * since what it published while cut off is lost.
 *
 * A notice names no tenant: the writes behind it are configuration changes,
 * rare beside runs, and a watcher dropping everything can never keep what a
 * change it could not attribute made stale.
 */

/** The subject of a configuration change notice; its body names the announcing service. */
export const CONFIG_CHANGED_SUBJECT = 'ars.cfg.changed';

/** Announces the changes of one service. */
export interface ConfigChangeAnnouncer {
  /** Announces that a write to a configuration input committed (or failed part way: announced either way). */
  announce(): void;
  stop(): void;
}

/**
 * Creates the announcer of `source` on `bus`. Each announce publishes at
 * once, on the connection the service replies on: a caller told its write
 * succeeded is told after the notice left, and one nats-server delivers a
 * connection's messages in order, so a run started after that reply is
 * resolved after the notice reached the executor.
 */
export function createConfigChangeAnnouncer(bus: Pick<Bus, 'nc'>, source: string): ConfigChangeAnnouncer {
  const body = utf8(source);
  let stopped = false;
  const publish = (): void => {
    if (stopped || bus.nc.isClosed()) return;
    bus.nc.publish(CONFIG_CHANGED_SUBJECT, body);
  };
  void (async () => {
    for await (const status of bus.nc.status()) {
      if (stopped) return;
      if (status.type === 'reconnect') publish();
    }
  })().catch(() => undefined);
  return {
    announce: publish,
    stop(): void {
      stopped = true;
    },
  };
}

/** A watch of configuration changes. */
export interface ConfigChangeWatch {
  stop(): void;
}

/**
 * Calls `onChange` for every notice on `bus`, and whenever the connection
 * drops or comes back (notices sent meanwhile are lost). Every watcher hears
 * every notice (no queue group).
 */
export function watchConfigChanges(bus: Pick<Bus, 'nc'>, onChange: () => void): ConfigChangeWatch {
  let stopped = false;
  const sub = bus.nc.subscribe(CONFIG_CHANGED_SUBJECT, {
    callback: (error) => {
      if (error === null && !stopped) onChange();
    },
  });
  void (async () => {
    for await (const status of bus.nc.status()) {
      if (stopped) return;
      if (status.type === 'disconnect' || status.type === 'reconnect') onChange();
    }
  })().catch(() => undefined);
  return {
    stop(): void {
      if (stopped) return;
      stopped = true;
      if (!bus.nc.isClosed()) sub.unsubscribe();
    },
  };
}

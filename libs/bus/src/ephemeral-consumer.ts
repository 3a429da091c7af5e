import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { ConsumerConfig, ConsumerInfo, JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from './connection.ts';

/**
 * Creating the ephemeral consumers that read a stream, in a way that holds up
 * while a cluster node is down. nats-server 2.9 places a one-replica
 * consumer on any peer of the stream, an offline peer included, and a
 * create placed there is never answered: after a node of three was killed,
 * about one create in three waited out the 5 s API timeout, for as long as
 * the node stayed away (measured on 2.9.10). A create answers in
 * milliseconds otherwise, so each attempt here gets a short timeout and the
 * next attempt is placed afresh. What a lost attempt left on the server goes
 * with its inactivity threshold.
 */

/** Options of {@link addEphemeralConsumer}. */
export interface EphemeralConsumerOptions {
  /** How long one create may take before it is tried again. @default 1500 */
  readonly attemptTimeoutMs?: number;
  /** Attempts before the last failure is thrown. @default 8 */
  readonly attempts?: number;
}

const managers = new WeakMap<Bus, Map<number, Promise<JetStreamManager>>>();

/** A manager on the bus's connection whose API requests give up after `timeoutMs` (one per bus and timeout). */
function shortManager(bus: Bus, timeoutMs: number): Promise<JetStreamManager> {
  let byTimeout = managers.get(bus);
  if (byTimeout === undefined) {
    byTimeout = new Map();
    managers.set(bus, byTimeout);
  }
  let manager = byTimeout.get(timeoutMs);
  if (manager === undefined) {
    manager = jetstreamManager(bus.nc, { timeout: timeoutMs, checkAPI: false });
    byTimeout.set(timeoutMs, manager);
  }
  return manager;
}

/** A refusal that another attempt cannot change: no such stream, a bad configuration. */
function isFinal(error: unknown): boolean {
  if (!(error instanceof JetStreamApiError)) return false;
  const status = error.status;
  return status === 400 || status === 404 || status === 409;
}

/** Creates an ephemeral consumer on `stream`, trying again (placed afresh) when an attempt goes unanswered. */
export async function addEphemeralConsumer(
  bus: Bus,
  stream: string,
  config: Partial<ConsumerConfig>,
  options: EphemeralConsumerOptions = {},
): Promise<ConsumerInfo> {
  const attempts = Math.max(1, options.attempts ?? 8);
  const manager = await shortManager(bus, options.attemptTimeoutMs ?? 1_500);
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await manager.consumers.add(stream, config);
    } catch (error) {
      if (isFinal(error) || bus.nc.isClosed()) throw error;
      lastError = error;
      // A leader election answers "no responders" at once: a short pause instead of a busy loop.
      await sleep(Math.min(50 * 2 ** attempt, 500));
    }
  }
  throw lastError;
}

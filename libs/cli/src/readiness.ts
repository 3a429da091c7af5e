import { setTimeout as sleep } from 'node:timers/promises';
import type { RpcClient } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { describeExit } from './service-process.ts';
import type { ServiceProcess } from './service-process.ts';

/** The internal health endpoint every service registers (`ars.rpc.<service>._health`). */
export const HEALTH_METHOD = '_health';

/** The identity the supervisor's probes travel under; `_health` does not consult it. */
const PROBE_IDENTITY: VerifiedIdentity = {
  tenant: 'system',
  user: 'ars-supervisor',
  session: 'supervisor',
  scopes: [],
};

const POLL_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 2_000;

/** A service that did not become ready: names it and carries its last output. */
export class StartupError extends Error {
  readonly service: string;
  constructor(service: string, reason: string, tail: readonly string[]) {
    const output =
      tail.length === 0 ? '' : `\nlast output of ${service}:\n${tail.map((line) => `  ${line}`).join('\n')}`;
    super(`${service} ${reason}${output}`);
    this.name = 'StartupError';
    this.service = service;
  }
}

/** When to give up waiting. */
export interface WaitBudget {
  /** `Date.now()` deadline. */
  readonly deadline: number;
  /** The whole budget in ms, for messages. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/**
 * Polls until `probe` resolves to a value other than `undefined`. Fails at
 * once when the process exits or the signal aborts, and at the deadline;
 * `what` completes "did not …" in the message (`answer _health over NATS`).
 */
export async function pollUntil<T>(
  proc: ServiceProcess,
  what: string,
  budget: WaitBudget,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  for (;;) {
    if (budget.signal.aborted) throw abortError(proc.name);
    if (proc.exitInfo)
      throw new StartupError(proc.name, `${describeExit(proc.exitInfo)} before it could ${what}`, proc.tail());
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= budget.deadline) {
      throw new StartupError(proc.name, `did not ${what} within ${budget.timeoutMs / 1000}s`, proc.tail());
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

/** Waits until `service` (default: the process's name) answers `_health` over NATS; resolves with the report. */
export function waitForHealth(
  rpc: RpcClient,
  proc: ServiceProcess,
  budget: WaitBudget,
  service: string = proc.name,
): Promise<unknown> {
  const what = service === proc.name ? `answer ${HEALTH_METHOD}` : `answer ${HEALTH_METHOD} for ${service}`;
  return pollUntil(proc, `${what} over NATS`, budget, async () => {
    try {
      const report = await rpc.call(service, HEALTH_METHOD, PROBE_IDENTITY, {}, { timeoutMs: PROBE_TIMEOUT_MS });
      return report ?? {};
    } catch {
      return undefined;
    }
  });
}

/** Waits until the gateway answers `GET /readyz` with a 2xx. */
export function waitForReadyz(baseUrl: string, proc: ServiceProcess, budget: WaitBudget): Promise<true> {
  return pollUntil(proc, `answer GET ${baseUrl}/readyz`, budget, async () => {
    try {
      const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await response.body?.cancel();
      return response.ok ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

/** The error a startup aborted by its caller rejects with. */
export function abortError(service: string): Error {
  const error = new Error(`startup aborted while waiting for ${service}`);
  error.name = 'AbortError';
  return error;
}

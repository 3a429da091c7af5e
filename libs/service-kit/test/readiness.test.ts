import { describe, expect, it } from 'vitest';
import type { Bus } from '@ars/bus';
import type { Store } from '@ars/store';
import { trackReadiness } from '../src/readiness.ts';

interface Fakes {
  readonly bus: Bus;
  readonly store: Store;
  readonly flushes: () => number;
}

/** A bus and store whose answers the test decides: `connected` is nats-core's own flag. */
function fakes(
  options: { connected?: boolean; flush?: () => Promise<void>; read?: () => Promise<unknown> } = {},
): Fakes {
  let flushes = 0;
  const nc = {
    isClosed: () => false,
    protocol: { connected: options.connected ?? true },
    flush: () => {
      flushes += 1;
      return (options.flush ?? (async () => undefined))();
    },
  };
  const store = { kind: 'embedded', collection: () => ({ findOne: options.read ?? (async () => null) }) };
  return { bus: { nc } as unknown as Bus, store: store as unknown as Store, flushes: () => flushes };
}

const never = () => new Promise<never>(() => undefined);

describe('trackReadiness', () => {
  it('reports starting until the service serves', async () => {
    await expect(trackReadiness().check()).resolves.toEqual({ status: 'starting', checks: {} });
  });

  it('reports ready once serving with NATS and the store answering', async () => {
    const tracker = trackReadiness();
    tracker.serving(fakes());
    await expect(tracker.check()).resolves.toEqual({ status: 'ready', checks: { nats: 'ok', store: 'ok' } });
  });

  it('reports the store failed when its read does not answer within the timeout', async () => {
    const tracker = trackReadiness({ checkTimeoutMs: 20 });
    tracker.serving(fakes({ read: never }));
    await expect(tracker.check()).resolves.toEqual({ status: 'unavailable', checks: { nats: 'ok', store: 'failed' } });
  });

  it('reports NATS failed without a round trip while the connection is down', async () => {
    const tracker = trackReadiness();
    const deps = fakes({ connected: false });
    tracker.serving(deps);
    await expect(tracker.check()).resolves.toMatchObject({ status: 'unavailable', checks: { nats: 'failed' } });
    expect(deps.flushes()).toBe(0);
  });

  it('reports stopping once stop begins, even for a round of checks already under way', async () => {
    const tracker = trackReadiness({ checkTimeoutMs: 20 });
    tracker.serving(fakes({ flush: never }));
    const underWay = tracker.check();
    tracker.stopping();
    await expect(underWay).resolves.toEqual({ status: 'stopping', checks: {} });
    await expect(tracker.check()).resolves.toEqual({ status: 'stopping', checks: {} });
  });

  it('answers concurrent probes with one round of checks', async () => {
    const tracker = trackReadiness();
    const deps = fakes();
    tracker.serving(deps);
    await Promise.all([tracker.check(), tracker.check(), tracker.check()]);
    expect(deps.flushes()).toBe(1);
  });
});

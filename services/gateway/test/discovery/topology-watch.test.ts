import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '@ars/telemetry';
import { startTopologyWatch } from '../../src/discovery/topology-watch.ts';

/** What a gateway's topology watch logs when a poll fails, before and after it stops. */

function watchWith(info: () => Promise<never>) {
  const warn = vi.fn();
  const watch = startTopologyWatch({
    discovery: { info },
    publisher: { publish: vi.fn() },
    intervalMs: 0,
    clock: () => new Date(),
    logger: { warn } as unknown as Logger,
  });
  return { watch, warn };
}

describe('the topology watch', () => {
  it('logs a poll that fails while it runs', async () => {
    const { watch, warn } = watchWith(() => Promise.reject(new Error('no responders')));
    await watch.poll();
    expect(warn).toHaveBeenCalledOnce();
    expect(warn.mock.calls[0]?.[1]).toBe('topology poll failed');
    watch.stop();
  });

  it('does not log a poll that fails because the gateway stopped while it waited, and polls no more', async () => {
    let fail: (error: Error) => void = () => undefined;
    const info = vi.fn(() => new Promise<never>((_, reject) => (fail = reject)));
    const { watch, warn } = watchWith(info);
    const inFlight = watch.poll();
    watch.stop();
    fail(new Error('connection closed'));
    await inFlight;
    await watch.poll();
    expect(warn).not.toHaveBeenCalled();
    expect(info).toHaveBeenCalledOnce();
  });
});

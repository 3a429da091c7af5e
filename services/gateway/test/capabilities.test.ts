import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '@ars/telemetry';
import { createCapabilitySource, deriveCapabilities, implementedMethods } from '../src/local/index.ts';
import type { DiscoveredInstance } from '../src/ports.ts';
import { FakeDiscovery, liveInstance } from './support/harness.ts';

const logger = createLogger({ name: 'capabilities-test', level: 'silent' });

/** A discovery whose `info()` calls are counted and can be held open. */
class CountingDiscovery extends FakeDiscovery {
  calls = 0;
  failWith: Error | undefined;
  override async info(): Promise<readonly DiscoveredInstance[]> {
    this.calls += 1;
    if (this.failWith !== undefined) throw this.failWith;
    return this.instances;
  }
}

describe('capabilities', () => {
  it('counts only endpoints registered with implemented true', () => {
    const live = implementedMethods([
      liveInstance('memory', ['memory.get']),
      liveInstance('memory', ['memory.put'], { implemented: false, id: 'memory-2' }),
    ]);
    expect([...live]).toEqual(['memory.get']);
  });

  it('derives nothing from an empty fleet', () => {
    expect(deriveCapabilities(new Set())).toEqual([]);
  });

  it('reuses a fresh discovery snapshot within the cache window', async () => {
    const discovery = new CountingDiscovery();
    let now = 0;
    const source = createCapabilitySource({ discovery, localMethods: new Set(), ttlMs: 1000, now: () => now, logger });
    await source.current();
    now = 500;
    await source.current();
    expect(discovery.calls).toBe(1);
  });

  it('serves the stale snapshot while one refresh runs after the window', async () => {
    const discovery = new CountingDiscovery();
    let now = 0;
    const source = createCapabilitySource({ discovery, localMethods: new Set(), ttlMs: 1000, now: () => now, logger });
    expect(await source.current()).toEqual([]);
    discovery.instances = [liveInstance('memory', ['memory.get', 'memory.put'])];
    now = 2000;
    expect(await source.current()).toEqual([]);
    await vi.waitFor(async () => expect(await source.current()).toEqual(['caller_memory']));
    expect(discovery.calls).toBe(2);
  });

  it('falls back to the gateway-local methods when discovery fails', async () => {
    const discovery = new CountingDiscovery();
    discovery.failWith = new Error('bus down');
    const source = createCapabilitySource({
      discovery,
      localMethods: new Set(['topology.snapshot']),
      ttlMs: 0,
      now: () => 0,
      logger,
    });
    expect(await source.current()).toEqual(['topology_snapshot']);
  });
});

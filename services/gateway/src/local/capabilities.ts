import type { Logger } from '@ars/telemetry';
import type { DiscoveredInstance, Discovery } from '../ports.ts';

/**
 * The capability strings of runtime.info and the methods backing each. A
 * capability is advertised only when every one of its methods is live.
 */
export const CAPABILITY_METHODS: Readonly<Record<string, readonly string[]>> = {
  task_control: [
    'start',
    'cancel',
    'pause',
    'resume',
    'approve',
    'reject',
    'redirect',
    'inject_context',
    'user_message',
    'prioritize',
  ],
  events_subscribe: ['events.subscribe'],
  runtime_posture: [
    'governance.posture',
    'llm.posture',
    'metrics.snapshot',
    'runtime.counters',
    'runtime.drivers',
    'runtime.health',
    'runtime.info',
  ],
  topology_snapshot: ['topology.snapshot'],
  caller_memory: ['memory.get', 'memory.put'],
};

/** Methods that some live instance registered with `implemented: 'true'` metadata. */
export function implementedMethods(instances: readonly DiscoveredInstance[]): Set<string> {
  const live = new Set<string>();
  for (const instance of instances) {
    for (const endpoint of instance.endpoints) {
      const method = endpoint.metadata?.method;
      if (method !== undefined && endpoint.metadata?.implemented === 'true') live.add(method);
    }
  }
  return live;
}

/** The capabilities whose every backing method is in `live`, in a stable order. */
export function deriveCapabilities(live: ReadonlySet<string>): string[] {
  return Object.entries(CAPABILITY_METHODS)
    .filter(([, methods]) => methods.every((method) => live.has(method)))
    .map(([capability]) => capability)
    .sort();
}

/** Options of {@link createCapabilitySource}. */
export interface CapabilitySourceOptions {
  readonly discovery: Discovery;
  /** The gateway's own implemented methods: live whenever the gateway answers. */
  readonly localMethods: ReadonlySet<string>;
  /** How long a discovery snapshot is reused; 0 asks discovery on every call. */
  readonly ttlMs: number;
  readonly now: () => number;
  readonly logger: Logger;
}

/**
 * Capabilities with a short-lived cache, so that runtime.info does not wait
 * for a `$SRV.INFO` fan-in on every call: a stale snapshot is served while a
 * single refresh runs in the background.
 */
export function createCapabilitySource(options: CapabilitySourceOptions): { current(): Promise<string[]> } {
  let cached: { at: number; capabilities: string[] } | undefined;
  let refreshing: Promise<string[]> | undefined;

  const refresh = (): Promise<string[]> => {
    refreshing ??= options.discovery
      .info()
      .then(
        (instances) => {
          const live = implementedMethods(instances);
          for (const method of options.localMethods) live.add(method);
          const capabilities = deriveCapabilities(live);
          cached = { at: options.now(), capabilities };
          return capabilities;
        },
        (error: unknown) => {
          options.logger.warn({ err: error }, 'service discovery failed; advertising the gateway capabilities only');
          return deriveCapabilities(options.localMethods);
        },
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  return {
    async current() {
      if (cached === undefined || options.ttlMs === 0) return refresh();
      if (options.now() - cached.at >= options.ttlMs) void refresh();
      return cached.capabilities;
    },
  };
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer } from '@ars/bus';
import type { EventFilter, NatsServerHandle } from '@ars/bus';
import { SCOPES } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { memoryService } from '../../src/service.ts';

export const ADMIN = [SCOPES.admin] as const;
export const FLEET = [SCOPES.consoleFleet] as const;
export const NONE = [] as const;

export { caller, uniqueTenant } from '@ars/service-kit/testing';

/** A spawned nats-server with the memory service in-process, called over NATS. */
export interface MemoryHarness {
  readonly dataDir: string;
  service(): InProcessService;
  call(identity: VerifiedIdentity, method: string, body: unknown): Promise<unknown>;
  outcome(identity: VerifiedIdentity, method: string, body: unknown): Promise<CallOutcome>;
  events(filter: EventFilter): Promise<EventFrame[]>;
  /** Stops the service (the store stays on disk when file-backed) and starts it again. */
  restart(beforeStart?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/** Options of {@link startMemoryHarness}. */
export interface MemoryHarnessOptions {
  readonly env?: Record<string, string>;
  /** Keep the store in files under a temporary DATA_DIR, so a restart keeps it. @default false */
  readonly fileStore?: boolean;
}

/** Starts nats-server and the memory service. */
export async function startMemoryHarness(options: MemoryHarnessOptions = {}): Promise<MemoryHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ars-memory-'));
  const dataDir = join(dir, 'data');
  const nats: NatsServerHandle = await startNatsServer({ storeDir: join(dir, 'nats') });
  const start = () =>
    startInProcess(memoryService, {
      natsUrl: nats.url,
      env: { DATA_DIR: dataDir, ...options.env },
      inMemoryStore: options.fileStore !== true,
    });
  let current: InProcessService;
  try {
    current = await start();
  } catch (error) {
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const call = (identity: VerifiedIdentity, method: string, body: unknown) =>
    current.rpc.call('memory', method, identity, body);
  return {
    dataDir,
    service: () => current,
    call,
    outcome: (identity, method, body) => outcomeOf(call(identity, method, body)),
    events: (filter) => storedEvents(current.bus, filter),
    async restart(beforeStart) {
      await current.stop();
      await beforeStart?.();
      current = await start();
    },
    async stop() {
      await current.stop();
      await nats.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

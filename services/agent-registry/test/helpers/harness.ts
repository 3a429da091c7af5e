import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { agentRegistryService } from '../../src/service.ts';

/** A spawned nats-server with the agent-registry running in this process, for one test file. */
export interface Harness {
  readonly service: InProcessService;
  readonly natsUrl: string;
  /** A caller of a fresh tenant (unless named): tests stay apart on the shared store and stream. */
  caller(scopes?: string[], tenant?: string): VerifiedIdentity;
  /** Calls a method with `identity: {}` added to the body. */
  call<T = Record<string, unknown>>(
    method: string,
    body: Record<string, unknown>,
    identity: VerifiedIdentity,
  ): Promise<T>;
  outcome(method: string, body: Record<string, unknown>, identity: VerifiedIdentity): Promise<CallOutcome>;
  /** The stored events of one type in a tenant, in stream order. */
  events(tenant: string, type: string): Promise<EventFrame[]>;
  stop(): Promise<void>;
}

/** Starts nats-server (own store dir) and the service. */
export async function startHarness(name: string): Promise<Harness> {
  const storeDir = await mkdtemp(join(tmpdir(), `ars-agent-registry-${name}-`));
  let nats: NatsServerHandle | undefined;
  try {
    nats = await startNatsServer({ storeDir });
    const service = await startInProcess(agentRegistryService, { natsUrl: nats.url });
    const started = nats;
    const call = <T>(method: string, body: Record<string, unknown>, identity: VerifiedIdentity) =>
      service.call(method, { identity: {}, ...body }, identity) as Promise<T>;
    return {
      service,
      natsUrl: nats.url,
      caller: (scopes = ['admin'], tenant = `t-${randomUUID()}`) => ({ tenant, user: 'alice', session: 's-1', scopes }),
      call,
      outcome: (method, body, identity) => outcomeOf(call(method, body, identity)),
      events: (tenant, type) => storedEvents(service.bus, { tenant, type }),
      stop: async () => {
        await service.stop();
        await started.stop();
        await rm(storeDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
}

/** The sorted keys of an event payload (to compare with the spec's member list). */
export function payloadKeys(frame: EventFrame | undefined): string[] {
  return Object.keys((frame?.payload ?? {}) as object).sort();
}

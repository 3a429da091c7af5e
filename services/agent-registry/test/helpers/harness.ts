import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus, serveService, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, ServedService } from '@ars/bus';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { agentRegistryService } from '../../src/service.ts';

/** A spawned nats-server with the agent-registry running in this process, for one test file. */
export interface Harness {
  readonly service: InProcessService;
  readonly natsUrl: string;
  /** The tenant overrides the governance stand-in answers, by tenant (a tenant not here: none set). */
  readonly overrides: Map<string, Record<string, unknown>>;
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

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  /**
   * Serves a governance stand-in answering `_governance.effective_overrides`
   * from `overrides` (an effective configuration fails closed without one).
   * @default true
   */
  readonly governance?: boolean;
}

/** Serves `_governance.effective_overrides` on `bus` from `overrides`. */
function serveGovernanceStandIn(bus: Bus, overrides: Harness['overrides']): Promise<ServedService> {
  return serveService(bus, {
    service: 'governance',
    version: '0.0.1',
    instanceId: 'governance-stand-in',
    logger: createLogger({ name: 'governance-stand-in', level: 'silent' }),
    handlers: {
      '_governance.effective_overrides': async ({ body }) => {
        const { tenant } = body as { tenant: string };
        return { tenant, overrides: overrides.get(tenant) ?? {} };
      },
    },
  });
}

/** Starts nats-server (own store dir), the service and, unless told, the governance stand-in. */
export async function startHarness(name: string, options: HarnessOptions = {}): Promise<Harness> {
  const storeDir = await mkdtemp(join(tmpdir(), `ars-agent-registry-${name}-`));
  let nats: NatsServerHandle | undefined;
  let bus: Bus | undefined;
  try {
    nats = await startNatsServer({ storeDir });
    const overrides: Harness['overrides'] = new Map();
    let governance: ServedService | undefined;
    if (options.governance ?? true) {
      bus = await connectBus({ servers: nats.url, name: 'governance-stand-in' });
      governance = await serveGovernanceStandIn(bus, overrides);
    }
    const service = await startInProcess(agentRegistryService, { natsUrl: nats.url });
    const started = nats;
    const standIn = bus;
    const call = <T>(method: string, body: Record<string, unknown>, identity: VerifiedIdentity) =>
      service.call(method, { identity: {}, ...body }, identity) as Promise<T>;
    return {
      service,
      natsUrl: nats.url,
      overrides,
      caller: (scopes = ['admin'], tenant = `t-${randomUUID()}`) => ({ tenant, user: 'alice', session: 's-1', scopes }),
      call,
      outcome: (method, body, identity) => outcomeOf(call(method, body, identity)),
      events: (tenant, type) => storedEvents(service.bus, { tenant, type }),
      stop: async () => {
        await service.stop();
        await governance?.stop();
        await standIn?.close();
        await started.stop();
        await rm(storeDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await bus?.close();
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
}

/** The sorted keys of an event payload (to compare with the spec's member list). */
export function payloadKeys(frame: EventFrame | undefined): string[] {
  return Object.keys((frame?.payload ?? {}) as object).sort();
}

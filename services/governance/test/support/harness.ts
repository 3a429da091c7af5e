import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeStoredEvent, startNatsServer } from '@ars/bus';
import type { NatsServerHandle, StoredEvent, Subscription } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { defineGovernanceService } from '../../src/service.ts';

/** A clock the test moves by hand. */
export interface TestClock {
  now(): number;
  advance(ms: number): void;
}

/** The governance service in-process against its own nats-server, with everything it emitted. */
export interface Harness {
  readonly service: InProcessService;
  readonly clock: TestClock;
  readonly dataDir: string;
  /** Every event published on `ars.ev.>` since the start, decoded. */
  readonly events: StoredEvent[];
  /** Every raw event body, as published. */
  readonly rawEvents: string[];
  /** Every log line the service wrote (debug and up). */
  readonly logs: string[];
  /** Every successful result returned through {@link Harness.call} or {@link Harness.outcome}, as JSON. */
  readonly responses: string[];
  call(method: string, body: unknown, identity: VerifiedIdentity): Promise<unknown>;
  outcome(method: string, body: unknown, identity: VerifiedIdentity): Promise<CallOutcome>;
  /** Resolves with the first event (already seen or coming) that matches. */
  waitForEvent(predicate: (event: StoredEvent) => boolean, what: string): Promise<StoredEvent>;
  stop(): Promise<void>;
}

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  readonly env?: Record<string, string>;
  /** @default true */
  readonly inMemoryStore?: boolean;
}

/** A fresh tenant name: tests never share tenant state. */
export function uniqueTenant(): string {
  return `t-${randomUUID().slice(0, 8)}`;
}

/** A verified identity of `tenant` with `scopes`. */
export function identityOf(tenant: string, scopes: readonly string[] = [], user = 'u-1'): VerifiedIdentity {
  return { tenant, user, session: 's-1', scopes };
}

/** The run quad of an identity (internal endpoints). */
export function runOf(identity: VerifiedIdentity, run = 'run-1') {
  return { tenant: identity.tenant, user: identity.user, session: identity.session, run };
}

/**
 * A fresh tenant with a caller and a run of it, under a posture with `tiers`
 * (the first is the default), set by an admin of that tenant.
 */
export async function givenPosture(
  h: Pick<Harness, 'call'>,
  tiers: readonly unknown[],
): Promise<{ caller: VerifiedIdentity; run: ReturnType<typeof runOf> }> {
  const tenant = uniqueTenant();
  const caller = identityOf(tenant, []);
  const names = tiers.map((t) => (t as { name: string }).name);
  await h.call(
    'governance.set_posture',
    { identity: {}, default_tier: names[0], tiers },
    identityOf(tenant, ['admin'], 'admin'),
  );
  return { caller, run: runOf(caller, `run-${tenant}`) };
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'ars-governance-'));
  const dataDir = join(root, 'data');
  let nats: NatsServerHandle | undefined;
  let service: InProcessService | undefined;
  let subscription: Subscription | undefined;
  const logs: string[] = [];
  const events: StoredEvent[] = [];
  const rawEvents: string[] = [];
  const responses: string[] = [];
  let nowMs = Date.now();
  const clock: TestClock = { now: () => nowMs, advance: (ms) => void (nowMs += ms) };
  try {
    nats = await startNatsServer({ storeDir: join(root, 'nats') });
    const logger = createLogger({
      name: 'governance',
      level: 'debug',
      destination: { write: (line: string) => void logs.push(line) },
    });
    service = await startInProcess(defineGovernanceService({ now: () => clock.now() }), {
      natsUrl: nats.url,
      env: { DATA_DIR: dataDir, ...options.env },
      logger,
      inMemoryStore: options.inMemoryStore ?? true,
    });
    subscription = service.bus.nc.subscribe('ars.ev.>', {
      callback: (error, msg) => {
        if (error !== null) return;
        rawEvents.push(new TextDecoder().decode(msg.data));
        events.push(decodeStoredEvent(msg.data));
      },
    });
    await service.bus.nc.flush();
  } catch (error) {
    await service?.stop();
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const running = service;
  const server = nats;
  const sub = subscription;

  const call = async (method: string, body: unknown, identity: VerifiedIdentity) => {
    const result = await running.rpc.call('governance', method, identity, body);
    responses.push(JSON.stringify(result));
    return result;
  };

  return {
    service: running,
    clock,
    dataDir,
    events,
    rawEvents,
    logs,
    responses,
    call,
    outcome: (method, body, identity) => outcomeOf(call(method, body, identity)),
    async waitForEvent(predicate, what) {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const found = events.find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline) {
          throw new Error(`no ${what} event; seen: ${events.map((e) => e.type).join(', ')}`);
        }
        await sleep(20);
      }
    },
    async stop() {
      sub.unsubscribe();
      try {
        await running.stop();
      } finally {
        await server.stop();
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

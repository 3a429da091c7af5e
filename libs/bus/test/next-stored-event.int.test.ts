import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ars/telemetry';
import {
  connectBus,
  createEventPublisher,
  ensureInfrastructure,
  eventFilterSubject,
  nextStoredEventSeq,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, EventPublisher, NatsServerHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

// nextStoredEventSeq asks the EVENTS stream's leader for the first message at
// or after a sequence that matches a filter with wildcards (`next_by_subj`,
// nats-server 2.9+): the check that tells a read's end from a replica behind.

const log = createLogger({ name: 'next-stored-event', level: 'silent' });

describe('nextStoredEventSeq', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let publisher: EventPublisher;

  beforeAll(async () => {
    dir = await tempDir('next-stored-event');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'next-stored-event' });
    await ensureInfrastructure(bus);
    publisher = createEventPublisher(bus, { source: 'next-stored-event', logger: log });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  const publish = async (tenant: string, session: string): Promise<number> =>
    (
      await publisher.publish({
        type: 'task.started',
        identity: { tenant, user: 'alice', session, run: 'run-1' },
        payload: { TaskID: 'run-1', PriorState: 'pending' },
      })
    ).sequence;

  it("finds a session's next message past other sessions', and none after its last", async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const a1 = await publish(tenant, 'a');
    const b1 = await publish(tenant, 'b');
    const a2 = await publish(tenant, 'a');
    await publish(tenant, 'b');
    const session = eventFilterSubject({ tenant, user: 'alice', session: 'a' });
    expect(await nextStoredEventSeq(bus, session, a1)).toBe(a1);
    expect(await nextStoredEventSeq(bus, session, b1)).toBe(a2);
    expect(await nextStoredEventSeq(bus, session, a2 + 1)).toBeUndefined();
    // The whole tenant (a wider wildcard), and a tenant with nothing stored.
    expect(await nextStoredEventSeq(bus, eventFilterSubject({ tenant }), a2 + 1)).toBe(a2 + 1);
    expect(await nextStoredEventSeq(bus, eventFilterSubject({ tenant: `none-${tenant}` }), 1)).toBeUndefined();
  });
});

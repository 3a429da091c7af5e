import { mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM, eventFilterSubject, startNatsServer } from '@ars/bus';
import type { Bus, EventPublisher, NatsServerHandle } from '@ars/bus';
import { publishMany, startIntGateway, startPublisher, triple } from './support/int-gateway.ts';
import type { IntGateway, Triple } from './support/int-gateway.ts';

// search.events answered 503 after 10 s for a tenant whose sessions were being
// erased (issue 32, item 5). Cause: a session erasure purges the session's
// subjects, and nats-server 2.9 moves every consumer whose filter covers them
// to the end of the stream (nats-server#3838): the read search.events had
// under way got nothing more and stalled for READ_STALL_MS. Real nats-server
// 2.9, real gateway; the erasures purge as the session service does.

let dir: string;
let nats: NatsServerHandle;
let gateway: IntGateway;
let bus: Bus;
let publisher: EventPublisher;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ars-gateway-search-erasures-'));
  nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  gateway = await startIntGateway(nats.url);
  ({ bus, publisher } = await startPublisher(nats.url));
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function searchEvents(token: string, body: Record<string, unknown>) {
  const response = await fetch(`${gateway.baseUrl}/v1/control/search.events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ identity: {}, ...body }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  };
}

/** What the session service's erasure does to the stream: purge the session's subjects. */
const purgeSession = (session: Triple) => bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventFilterSubject(session) });

describe('search.events while the tenant’s sessions are being erased', () => {
  it('answers every search at once, however many erasures land during it', async () => {
    const me = triple('search-erasures');
    const sessions: Triple[] = Array.from({ length: 40 }, (_, i) => ({ ...me, session: `${me.session}-${i}` }));
    // Enough of the caller's events that a search matching none of them reads for a while, in several spans.
    await publishMany(publisher, me, 20_000, 'kept');
    for (const session of sessions) await publishMany(publisher, session, 10, 'erased');
    const token = await gateway.token(me);

    // Far more often than erasures come (each is a cascade over five services): one every 20 ms.
    let erasing = true;
    let purges = 0;
    const eraser = (async () => {
      for (let i = 0; erasing; i = (i + 1) % sessions.length) {
        await purgeSession(sessions[i]!);
        purges += 1;
        await sleep(20);
      }
    })();
    const answers = [];
    let purgesDuring = 0;
    try {
      // Each search must end while the erasures keep landing: one that started over on every purge would never
      // end, and the test would time out (a count, not a time bound: these machines differ 2× from day to day).
      for (let round = 0; round < 3; round++) {
        const before = purges;
        answers.push(await searchEvents(token, { query: 'no-such-text' }));
        purgesDuring += purges - before;
      }
    } finally {
      erasing = false;
      await eraser;
    }
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(purgesDuring).toBeGreaterThan(0);
    const kept = await searchEvents(token, { query: 'kept-19999' });
    expect(kept.status).toBe(200);
    expect((kept.body.items as { id: string }[]).length).toBe(1);
  }, 120_000);
});

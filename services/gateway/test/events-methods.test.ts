import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getEvent, getMethod } from '@ars/contracts';
import type { EventFrame } from '@ars/contracts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import type { AppendEvent } from './support/memory-event-log.ts';
import { FailingReadLog, ShortReadLog } from './support/memory-event-log.ts';
import { routeOf } from './support/bodies.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const ev = (extra: Partial<AppendEvent> = {}): AppendEvent => ({
  tenant: 't1',
  user: 'u1',
  session: 's1',
  run: 'r1',
  type: 'task.started',
  payload: { TaskID: 'r1', PriorState: 'pending' },
  ...extra,
});

let h: Harness;

beforeEach(async () => {
  h = await createHarness({ events: { heartbeatMs: 60_000 } });
});

afterEach(async () => {
  await h.close();
});

async function call(method: string, body: Record<string, unknown>, scopes: string[] = []) {
  const response = await h.post(routeOf(method), { identity: {}, ...body }, { token: h.token({ scopes }) });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

const sequences = (body: Record<string, unknown>) => (body.items as EventFrame[]).map((item) => item.sequence);

describe('events.list: folding', () => {
  beforeEach(() => {
    h.log.append(ev()); // 1 own
    h.log.append(ev({ session: 's2' })); // 2 own, other session
    h.log.append(ev({ user: 'u2' })); // 3 same tenant, other user
    h.log.append(ev({ tenant: 't2', user: 'u1' })); // 4 other tenant
  });

  it('reads every session of the caller when the filter is omitted', async () => {
    const answer = await call('events.list', {});
    expect(answer.status).toBe(200);
    expect(sequences(answer.body)).toEqual([1, 2]);
    expect(answer.body.last_sequence).toBe(4);
    expect(h.events.published).toEqual([]);
  });

  it('narrows to one session with filter.session, without a claim', async () => {
    expect(sequences((await call('events.list', { filter: { session: 's2' } })).body)).toEqual([2]);
  });

  it('refuses another user without admin or console:fleet with 403 identity_scope_required', async () => {
    const answer = await call('events.list', { filter: { user: 'u2' } });
    expect(answer).toEqual({ status: 403, body: expect.objectContaining({ code: 'identity_scope_required' }) });
  });

  it('refuses another tenant without admin or console:fleet with 403 scope_mismatch', async () => {
    const answer = await call('events.list', { filter: { tenant: 't2' } });
    expect(answer).toEqual({ status: 403, body: expect.objectContaining({ code: 'scope_mismatch' }) });
  });

  it('refuses a body identity naming another tenant with 401 identity_required', async () => {
    const response = await h.post(routeOf('events.list'), { identity: { tenant: 't2' } }, { token: h.token() });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('identity_required');
  });

  it('accepts the own user named explicitly without a claim', async () => {
    expect(sequences((await call('events.list', { filter: { user: 'u1' } })).body)).toEqual([1, 2]);
  });

  it('reads a named user with console:fleet and audits the crossing', async () => {
    const answer = await call('events.list', { filter: { user: 'u2' } }, ['console:fleet']);
    expect(sequences(answer.body)).toEqual([3]);
    const audit = h.events.published.find((event) => event.type === 'audit.admin_scope_used');
    expect(audit?.payload).toMatchObject({ Method: 'events.list', Impersonating: { tenant: 't1', user: 'u2' } });
    expect(getEvent('audit.admin_scope_used')!.payload.safeParse(audit!.payload).success).toBe(true);
  });

  it('fans across the tenant when a claim holder omits the user', async () => {
    const answer = await call('events.list', {}, ['admin']);
    expect(sequences(answer.body)).toEqual([1, 2, 3]);
    expect(h.events.published).toHaveLength(1);
  });

  it('reads another tenant with admin', async () => {
    expect(sequences((await call('events.list', { filter: { tenant: 't2' } }, ['admin'])).body)).toEqual([4]);
  });
});

describe('events.list: a read whose pending count falls short', () => {
  async function harnessWith(stopAfter: number) {
    await h.close();
    h = await createHarness({ log: new ShortReadLog(stopAfter), events: { heartbeatMs: 60_000 } });
    for (let i = 0; i < 5; i++) h.log.append(ev());
  }

  it('reads on after a read that ended early, so the page misses nothing', async () => {
    await harnessWith(2);
    const answer = await call('events.list', {});
    expect(sequences(answer.body)).toEqual([1, 2, 3, 4, 5]);
    expect(answer.body.next_cursor).toBeUndefined();
  });

  it('gives a next_cursor when a full page stops at a record counted as the last', async () => {
    await harnessWith(2);
    const first = await call('events.list', { limit: 2 });
    expect(sequences(first.body)).toEqual([1, 2]);
    const second = await call('events.list', { limit: 10, cursor: first.body.next_cursor });
    expect(sequences(second.body)).toEqual([3, 4, 5]);
  });
});

describe('events.list: reads served by a replica still catching up (a NATS node just restarted)', () => {
  it('reads again until the reads deliver what the leader holds, so the page misses nothing', async () => {
    for (let i = 0; i < 6; i++) h.log.append(ev());
    h.log.replicaLastSeq = 3;
    // The replica catches up while the call waits.
    setTimeout(() => (h.log.replicaLastSeq = undefined), 250);
    const answer = await call('events.list', {});
    expect(answer.status).toBe(200);
    expect(sequences(answer.body)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(answer.body.next_cursor).toBeUndefined();
  });

  it('gives a next_cursor for a full page whose reads counted nothing after it but the leader holds more', async () => {
    for (let i = 0; i < 6; i++) h.log.append(ev());
    h.log.replicaLastSeq = 2;
    const first = await call('events.list', { limit: 2 });
    expect(sequences(first.body)).toEqual([1, 2]);
    expect(first.body.next_cursor).toBeDefined();
    h.log.replicaLastSeq = undefined;
    expect(sequences((await call('events.list', { cursor: first.body.next_cursor })).body)).toEqual([3, 4, 5, 6]);
  });

  it('answers 503 unavailable, retryable, rather than a short list while the replica stays behind', async () => {
    for (let i = 0; i < 4; i++) h.log.append(ev());
    h.log.replicaLastSeq = 2;
    const answer = await call('events.list', {});
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'unavailable' });
    h.log.replicaLastSeq = undefined;
    expect(sequences((await call('events.list', {})).body)).toEqual([1, 2, 3, 4]);
  });

  it('ends at the end of the stream without waiting when the leader holds nothing more', async () => {
    for (let i = 0; i < 3; i++) h.log.append(ev());
    h.log.append(ev({ session: 's2' }));
    const answer = await call('events.list', { filter: { session: 's1' } });
    expect(sequences(answer.body)).toEqual([1, 2, 3]);
    expect(answer.body.next_cursor).toBeUndefined();
  });
});

describe('events.list: a read that fails (nats-server restarting)', () => {
  it('answers 503 unavailable, retryable, in the error envelope', async () => {
    await h.close();
    h = await createHarness({ log: new FailingReadLog(2, 1), events: { heartbeatMs: 60_000 } });
    for (let i = 0; i < 5; i++) h.log.append(ev());
    const answer = await call('events.list', {});
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'unavailable' });
    // The next call reads the stream afresh and gets the whole page.
    expect(sequences((await call('events.list', {})).body)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('events.list: filters and pages', () => {
  beforeEach(() => {
    h.log.append(ev({ occurredAt: at(0) })); // 1
    h.log.append(ev({ run: 'r2', occurredAt: at(10) })); // 2
    h.log.append(ev({ type: 'task.completed', payload: {}, occurredAt: at(20) })); // 3
    h.log.append(ev({ type: 'task.failed', payload: {}, run: 'r2', occurredAt: at(30) })); // 4
    h.log.append(ev({ type: 'task.completed', payload: {}, run: 'r2', occurredAt: at(40) })); // 5
    h.log.append(ev({ occurredAt: at(50) })); // 6
    h.log.append(ev({ occurredAt: at(60) })); // 7
  });

  it('narrows to one run', async () => {
    expect(sequences((await call('events.list', { filter: { run: 'r2' } })).body)).toEqual([2, 4, 5]);
  });

  it('narrows to one type', async () => {
    expect(sequences((await call('events.list', { filter: { types: ['task.completed'] } })).body)).toEqual([3, 5]);
  });

  it('narrows to several types', async () => {
    const answer = await call('events.list', { filter: { types: ['task.completed', 'task.failed'] } });
    expect(sequences(answer.body)).toEqual([3, 4, 5]);
  });

  it('narrows to a time window on occurred_at, start inclusive, end exclusive', async () => {
    const answer = await call('events.list', {
      filter: { since: at(10).toISOString(), until: at(40).toISOString() },
    });
    expect(sequences(answer.body)).toEqual([2, 3, 4]);
  });

  it('combines run, types and window', async () => {
    const answer = await call('events.list', {
      filter: { run: 'r2', types: ['task.completed', 'task.started'], since: at(5).toISOString() },
    });
    expect(sequences(answer.body)).toEqual([2, 5]);
  });

  it('pages with next_cursor until the last page, which has none', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const answer = await call('events.list', { limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...sequences(answer.body));
      cursor = answer.body.next_cursor as string | undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(pages).toBe(3);
  });

  it('starts strictly after after_sequence', async () => {
    expect(sequences((await call('events.list', { after_sequence: 5 })).body)).toEqual([6, 7]);
  });

  it('refuses a cursor it did not make with 400 invalid_request', async () => {
    const answer = await call('events.list', { cursor: 'not-a-cursor' });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_request' }) });
  });

  it('refuses a window that ends before it starts', async () => {
    const answer = await call('events.list', {
      filter: { since: at(10).toISOString(), until: at(5).toISOString() },
    });
    expect(answer.status).toBe(400);
  });

  it('answers with the registry response shape', async () => {
    const answer = await call('events.list', { limit: 2 });
    expect(getMethod('events.list')!.response.safeParse(answer.body).success).toBe(true);
  });
});

describe('events.aggregate', () => {
  beforeEach(() => {
    // Stored in time order, as the stream stores them.
    h.log.append(ev({ occurredAt: at(0) }));
    h.log.append(ev({ user: 'u2', occurredAt: at(1) }));
    h.log.append(ev({ occurredAt: at(5) }));
    h.log.append(ev({ type: 'task.completed', payload: {}, occurredAt: at(70) }));
    h.log.append(ev({ type: 'task.completed', payload: {}, occurredAt: at(200) }));
  });

  it('counts by type and by aligned time bucket, empty buckets included', async () => {
    const answer = await call('events.aggregate', {
      filter: { since: at(0).toISOString(), until: at(180).toISOString() },
      bucket_seconds: 3600,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      since: at(0).toISOString(),
      until: at(180).toISOString(),
      bucket_seconds: 3600,
      total: 3,
      by_type: { 'task.started': 2, 'task.completed': 1 },
      buckets: [
        { start: at(0).toISOString(), count: 2, by_type: { 'task.started': 2 } },
        { start: at(60).toISOString(), count: 1, by_type: { 'task.completed': 1 } },
        { start: at(120).toISOString(), count: 0, by_type: {} },
      ],
    });
    expect(getMethod('events.aggregate')!.response.safeParse(answer.body).success).toBe(true);
  });

  it('defaults to the last 24 hours', async () => {
    h.log.append(ev({ occurredAt: new Date(Date.now() - 60_000) }));
    const answer = await call('events.aggregate', {});
    expect(answer.body.total).toBe(1);
    expect((answer.body.buckets as unknown[]).length).toBeGreaterThanOrEqual(24);
  });

  it('applies the folding rules of events.list', async () => {
    const window = { since: at(0).toISOString(), until: at(180).toISOString() };
    expect((await call('events.aggregate', { filter: { ...window, user: 'u2' } })).status).toBe(403);
    const fleet = await call('events.aggregate', { filter: window }, ['console:fleet']);
    expect(fleet.body.total).toBe(4);
  });

  it('refuses a window of more than 10000 buckets', async () => {
    const answer = await call('events.aggregate', {
      filter: { since: at(0).toISOString(), until: at(60 * 24 * 30).toISOString() },
      bucket_seconds: 1,
    });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_request' }) });
  });
});

describe('search.events', () => {
  beforeEach(() => {
    h.log.append(ev({ payload: { TaskID: 'alpha-task', PriorState: 'pending' } })); // 1
    h.log.append(ev({ type: 'task.completed', payload: {} })); // 2
    h.log.append(ev({ session: 's2', payload: { TaskID: 'Beta-Task', PriorState: 'pending' } })); // 3
    h.log.append(ev({ tenant: 't2', payload: { TaskID: 'alpha-elsewhere', PriorState: 'pending' } })); // 4
    h.log.append(ev({ user: 'u2', payload: { TaskID: 'alpha-colleague', PriorState: 'pending' } })); // 5
  });

  const ids = (body: Record<string, unknown>) => (body.items as { id: string }[]).map((item) => Number(item.id));

  it('searches the caller’s own events, newest first', async () => {
    const answer = await call('search.events', {});
    expect(answer.status).toBe(200);
    expect(ids(answer.body)).toEqual([3, 2, 1]);
    expect(answer.body.protocol_version).toBe('0.1.0');
    expect(getMethod('search.events')!.response.safeParse(answer.body).success).toBe(true);
  });

  it('matches free text over the payload, case-insensitively, with a snippet', async () => {
    const answer = await call('search.events', { query: 'BETA' });
    expect(ids(answer.body)).toEqual([3]);
    const [hit] = answer.body.items as { kind: string; snippet: string; record: EventFrame }[];
    expect(hit).toMatchObject({ kind: 'event', title: 'task.started', record: { sequence: 3 } });
    expect(hit?.snippet).toContain('Beta-Task');
  });

  it('matches free text over the type', async () => {
    expect(ids((await call('search.events', { query: 'completed' })).body)).toEqual([2]);
  });

  it('requires every term', async () => {
    expect(ids((await call('search.events', { query: 'alpha pending' })).body)).toEqual([1]);
    expect(ids((await call('search.events', { query: 'alpha nothing' })).body)).toEqual([]);
  });

  it('narrows by one session and by type', async () => {
    expect(ids((await call('search.events', { filter: { session_ids: ['s2'] } })).body)).toEqual([3]);
    expect(ids((await call('search.events', { filter: { types: ['task.completed'] } })).body)).toEqual([2]);
  });

  it('refuses another tenant without a claim with 403 scope_mismatch', async () => {
    const answer = await call('search.events', { filter: { tenant_ids: ['t2'] } });
    expect(answer).toEqual({ status: 403, body: expect.objectContaining({ code: 'scope_mismatch' }) });
  });

  it('refuses several sessions without a claim with 403 scope_mismatch', async () => {
    const answer = await call('search.events', { filter: { session_ids: ['s1', 's2'] } });
    expect(answer.status).toBe(403);
  });

  it('searches named tenants and users with console:fleet', async () => {
    const answer = await call(
      'search.events',
      { query: 'alpha', filter: { tenant_ids: ['t1', 't2'], user_ids: ['u1', 'u2'] } },
      ['console:fleet'],
    );
    expect(ids(answer.body)).toEqual([5, 4, 1]);
  });

  it('pages newest first with next_cursor', async () => {
    const first = await call('search.events', { limit: 2 });
    expect(ids(first.body)).toEqual([3, 2]);
    const second = await call('search.events', { limit: 2, cursor: first.body.next_cursor });
    expect(ids(second.body)).toEqual([1]);
    expect(second.body.next_cursor).toBeUndefined();
  });
});

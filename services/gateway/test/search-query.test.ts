import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { SearchHit } from '@ars/contracts';
import { compareHits } from '../src/local/search-query.handler.ts';
import { routeOf } from './support/bodies.ts';
import { createHarness, scoped } from './support/harness.ts';
import type { Harness, RecordedCall } from './support/harness.ts';

const ROUTE = routeOf('search.query');
const OWNERS: Readonly<Record<string, string>> = {
  'search.tasks': 'task',
  'search.sessions': 'session',
  'search.artifacts': 'artifact',
};

interface Row {
  readonly id: string;
  readonly at: number;
  readonly score?: number;
}

let h: Harness;
/** Each owner's records; each answers newest first with a keyset cursor (the last id). */
let rows: Record<string, Row[]>;
let failing: Record<string, ServiceError>;

function hit(kind: string, row: Row): SearchHit {
  return {
    kind: kind as SearchHit['kind'],
    id: row.id,
    tenant: 't1',
    user: 'u1',
    session: 's1',
    occurred_at: new Date(row.at).toISOString(),
    ...(row.score === undefined ? {} : { score: row.score }),
  };
}

function ownerPage(call: RecordedCall) {
  const kind = OWNERS[call.method]!;
  const failure = failing[kind];
  if (failure !== undefined) throw failure;
  const body = call.body as { limit: number; cursor?: string; filter?: { until?: string } };
  const until = body.filter?.until === undefined ? Infinity : Date.parse(body.filter.until);
  const visible = (rows[kind] ?? []).filter((row) => row.at < until).sort((a, b) => b.at - a.at);
  const start = body.cursor === undefined ? 0 : visible.findIndex((row) => row.id === body.cursor) + 1;
  const items = visible.slice(start, start + body.limit);
  const more = start + body.limit < visible.length;
  return { items: items.map((row) => hit(kind, row)), ...(more ? { next_cursor: items.at(-1)!.id } : {}) };
}

async function search(body: Record<string, unknown> = {}, token?: string) {
  const response = await h.post(ROUTE, { identity: {}, ...body }, token === undefined ? {} : { token });
  return response;
}

async function searchAll(limit: number, extra: Record<string, unknown> = {}) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const response = await search({ limit, ...extra, ...(cursor === undefined ? {} : { cursor }) });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    ids.push(...body.items.map((item: SearchHit) => item.id));
    cursor = body.next_cursor;
    if (cursor === undefined) return ids;
  }
  throw new Error('no last page');
}

const T0 = Date.parse('2024-01-01T00:00:00Z');

beforeEach(async () => {
  h = await createHarness();
  failing = {};
  rows = {
    task: [0, 3, 6, 9, 12].map((i) => ({ id: `task-${i}`, at: T0 - i * 1000 })),
    session: [1, 4, 7].map((i) => ({ id: `session-${i}`, at: T0 - i * 1000 })),
    artifact: [2, 5, 8, 10, 11].map((i) => ({ id: `artifact-${i}`, at: T0 - i * 1000 })),
  };
  h.rpc.respond = async (call) => ownerPage(call);
});

afterEach(async () => {
  await h.close();
});

describe('search.query', () => {
  it('asks every owner with the caller identity, the query, the filter and until pinned to now', async () => {
    const filter = {
      session_ids: ['s1'],
      since: '2029-01-01T00:00:00Z',
      kinds: ['task', 'session', 'artifact', 'event'],
    };
    const before = Date.now();
    const response = await search({ query: 'report', filter, limit: 5 });
    expect(response.statusCode, response.body).toBe(200);
    expect(h.rpc.calls.map((call) => [call.service, call.method])).toEqual([
      ['run-executor', 'search.tasks'],
      ['session', 'search.sessions'],
      ['artifact', 'search.artifacts'],
    ]);
    for (const call of h.rpc.calls) {
      expect(call.identity).toEqual({ tenant: 't1', user: 'u1', session: 's1', scopes: [] });
      expect(call.body).toEqual({
        identity: { tenant: 't1', user: 'u1', session: 's1' },
        query: 'report',
        filter: { session_ids: ['s1'], since: '2029-01-01T00:00:00Z', until: expect.any(String) },
        limit: 5,
      });
      const until = Date.parse((call.body.filter as { until: string }).until);
      expect(until).toBeGreaterThanOrEqual(before - 1);
      expect(until).toBeLessThanOrEqual(Date.now());
    }
  });

  it('keeps a caller’s until that is earlier than now', async () => {
    await search({ filter: { until: '2020-01-01T00:00:00Z' } });
    expect(h.rpc.last?.body.filter).toEqual({ until: '2020-01-01T00:00:00Z' });
  });

  it('merges the owners’ hits newest first when none has a score', async () => {
    const body = (await search({ limit: 6 })).json();
    expect(body.items.map((item: SearchHit) => item.id)).toEqual([
      'task-0',
      'session-1',
      'artifact-2',
      'task-3',
      'session-4',
      'artifact-5',
    ]);
    expect(body).not.toHaveProperty('partial');
    expect(body.protocol_version).toBe('0.1.0');
  });

  it('puts higher scores first, then newer hits', async () => {
    rows.task = [
      { id: 'old-strong', at: T0 - 50_000, score: 3 },
      { id: 'new-weak', at: T0, score: 1 },
    ];
    rows.artifact = [{ id: 'mid-strong', at: T0 - 10_000, score: 3 }];
    rows.session = [{ id: 'unscored', at: T0 + 1000 }];
    const ids = (await search({ query: 'x' })).json().items.map((item: SearchHit) => item.id);
    expect(ids).toEqual(['mid-strong', 'new-weak', 'old-strong', 'unscored']);
  });

  it('pages through the merged list without gap or repeat', async () => {
    const whole = await searchAll(500);
    expect(whole).toHaveLength(13);
    for (const limit of [1, 2, 3, 5]) expect(await searchAll(limit)).toEqual(whole);
  });

  it('keeps records created after the first page out of the later pages', async () => {
    const first = (await search({ limit: 2 })).json();
    rows.task!.push({ id: 'task-new', at: Date.now() + 60_000 });
    rows.task!.push({ id: 'task-just-now', at: Date.now() });
    const rest = await (async () => {
      const ids: string[] = [];
      let cursor = first.next_cursor as string | undefined;
      while (cursor !== undefined) {
        const body = (await search({ limit: 4, cursor })).json();
        ids.push(...body.items.map((item: SearchHit) => item.id));
        cursor = body.next_cursor;
      }
      return ids;
    })();
    expect([...first.items.map((item: SearchHit) => item.id), ...rest]).not.toContain('task-new');
    expect(rest).not.toContain('task-just-now');
    expect(rest).toHaveLength(11);
  });

  it('degrades when an owner fails: the others answer, the failure is reported', async () => {
    failing.session = new ServiceError('unavailable', 'service session is not available');
    const body = (await search({ limit: 50 })).json();
    expect(body.items.map((item: SearchHit) => item.kind)).not.toContain('session');
    expect(body.items).toHaveLength(10);
    expect(body.partial).toBe(true);
    expect(body.failed_kinds).toEqual(['session']);
    expect(body.source_errors).toEqual([
      { kind: 'session', code: 'unavailable', message: 'service session is not available' },
    ]);
  });

  it('asks a failed owner again from where it stood on the next page', async () => {
    failing.session = new ServiceError('timeout', 'no answer');
    const first = (await search({ limit: 4 })).json();
    expect(first.items.map((item: SearchHit) => item.id)).toEqual(['task-0', 'artifact-2', 'task-3', 'artifact-5']);
    delete failing.session;
    h.rpc.calls.length = 0;
    const second = (await search({ limit: 50, cursor: first.next_cursor })).json();
    const sessionCall = h.rpc.calls.find((call) => call.method === 'search.sessions');
    expect(sessionCall?.body).not.toHaveProperty('cursor');
    expect(second.items.map((item: SearchHit) => item.id)).toContain('session-1');
    expect(second).not.toHaveProperty('partial');
  });

  it('ends the paging when nothing was found and only failed owners are left', async () => {
    for (const kind of ['task', 'session', 'artifact']) failing[kind] = new ServiceError('unavailable', 'down');
    const body = (await search()).json();
    expect(body.items).toEqual([]);
    expect(body).not.toHaveProperty('next_cursor');
    expect(body.failed_kinds).toEqual(['task', 'session', 'artifact']);
  });

  it('reports an owner answering something that is not a page as failed', async () => {
    h.rpc.respond = async (call) => (call.method === 'search.tasks' ? { served_by: 'nobody' } : ownerPage(call));
    const body = (await search()).json();
    expect(body.source_errors).toEqual([{ kind: 'task', code: 'internal', message: 'search.tasks answered no items' }]);
  });

  it('asks only the owners filter.kinds names', async () => {
    const body = (await search({ filter: { kinds: ['artifact'] } })).json();
    expect(h.rpc.calls.map((call) => call.method)).toEqual(['search.artifacts']);
    expect(new Set(body.items.map((item: SearchHit) => item.kind))).toEqual(new Set(['artifact']));
  });

  it('includes the stored events, searched in this process', async () => {
    h.log.append({
      tenant: 't1',
      user: 'u1',
      session: 's1',
      run: 'r1',
      type: 'task.started',
      payload: { TaskID: 'r1', PriorState: 'pending' },
      occurredAt: new Date(T0 + 5_000),
    });
    const body = (await search({ limit: 1 })).json();
    expect(body.items[0]).toMatchObject({ kind: 'event', title: 'task.started' });
  });

  it('refuses a cursor of another query, or one it did not make, with 400', async () => {
    const first = (await search({ query: 'a', limit: 1 })).json();
    expect((await search({ query: 'b', limit: 1, cursor: first.next_cursor })).statusCode).toBe(400);
    expect((await search({ query: 'a', limit: 1, cursor: 'not-a-cursor' })).statusCode).toBe(400);
    expect((await search({ query: 'a', limit: 1, cursor: first.next_cursor })).statusCode).toBe(200);
  });

  it('refuses a filter naming another tenant without a claim (403 scope_mismatch) and asks nobody', async () => {
    const response = await search({ filter: { tenant_ids: ['t2'] } });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'scope_mismatch' });
    expect(h.rpc.calls).toEqual([]);
  });

  it('lets console:fleet search another tenant, audits it once and forwards the filter', async () => {
    const response = await search({ filter: { tenant_ids: ['t2'] } }, h.token(scoped('console:fleet')));
    expect(response.statusCode).toBe(200);
    expect(h.events.published.filter((event) => event.type === 'audit.admin_scope_used')).toHaveLength(1);
    expect(h.rpc.last?.body.filter).toMatchObject({ tenant_ids: ['t2'] });
  });
});

describe('compareHits', () => {
  const base = { tenant: 't', user: 'u', session: 's', occurred_at: '2030-01-01T00:00:00Z' };

  it('orders by score, then recency, then kind, then id', () => {
    const hits: SearchHit[] = [
      { ...base, kind: 'event', id: 'b' },
      { ...base, kind: 'task', id: 'z' },
      { ...base, kind: 'task', id: 'a' },
      { ...base, kind: 'session', id: 'n', occurred_at: '2030-01-02T00:00:00Z' },
      { ...base, kind: 'artifact', id: 's', score: 2 },
    ];
    expect([...hits].sort(compareHits).map((hit) => hit.id)).toEqual(['s', 'n', 'a', 'z', 'b']);
  });
});

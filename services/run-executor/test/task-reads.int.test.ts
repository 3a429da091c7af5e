import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getMethod } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { createEventPublisher, createRpcClient } from '@ars/bus';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { outcomeOf, storedEvents } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import type { TaskRecord } from '../src/domain/task.ts';
import type { ApiDeps } from '../src/handlers/index.ts';
import { createPauseListHandler } from '../src/handlers/pause-list.handler.ts';
import { createTaskReadHandlers } from '../src/handlers/tasks-read.handler.ts';
import type { TaskRepository } from '../src/store/task.repository.ts';
import { ABBREVIATED_CHARS, replyBudgetBytes } from '../src/domain/reply-size.ts';
import { newCaller, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';
import { pauseRecord, seedTask } from './helpers/seed.ts';

interface TaskView {
  task_id: string;
  status: string;
  kind: string;
  session: string;
  query: string;
  created_at: string;
  parent_task_id?: string;
}
interface ListPage {
  items: TaskView[];
  next_cursor?: string;
  counts: Record<string, number>;
  counts_complete: boolean;
  sequence: number;
  protocol_version: string;
}

describe('tasks.get and tasks.list', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  const seed = (caller: VerifiedIdentity, overrides: Partial<TaskRecord> = {}) => seedTask(h, caller, overrides);

  const list = (caller: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    h.call('tasks.list', body, caller) as Promise<ListPage>;

  describe('tasks.get', () => {
    it('returns the TaskDetail of an own task', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller, { query: 'Summarise' });
      await h.tasks.recordStep(taskId, { index: 1, cost_usd: 0.01, tokens_in: 100, tokens_out: 20, model: 'm-1' });
      await h.tasks.recordStep(taskId, {
        index: 2,
        cost_usd: 0.02,
        tokens_in: 50,
        tokens_out: 5,
        model: 'm-1',
        tool: 'echo',
      });
      expect(await h.tasks.recordStep(taskId, { index: 1, cost_usd: 9, tokens_in: 9, tokens_out: 9 })).toBe(false);
      const [spawned] = await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' });
      const detail = (await h.call('tasks.get', { task_id: taskId }, caller)) as Record<string, unknown>;
      expect(detail).toMatchObject({
        task: { task_id: taskId, status: 'pending', query: 'Summarise', goal: 'Summarise' },
        parent_session: { tenant: caller.tenant, user: caller.user, session_id: caller.session },
        cost_rollup: [
          { step: 1, model: 'm-1', input_tokens: 100, output_tokens: 20, cost: 0.01, currency: 'USD' },
          { step: 2, model: 'm-1', input_tokens: 50, output_tokens: 5, cost: 0.02, currency: 'USD', tool: 'echo' },
        ],
        cost_total: { input_tokens: 150, output_tokens: 25, currency: 'USD' },
        trajectory_ref: { kind: 'events', run: taskId, from_sequence: spawned!.sequence, step_count: 2 },
        protocol_version: '0.1.0',
      });
      expect((detail.cost_total as { cost: number }).cost).toBeCloseTo(0.03);
      expect(detail).not.toHaveProperty('parent_task');
      expect(detail.task).not.toHaveProperty('steps');
      expect(detail.task).not.toHaveProperty('idempotency_scope');
      expect(detail.sequence).toBeGreaterThanOrEqual(spawned!.sequence);
    });

    it('references the parent task', async () => {
      const caller = newCaller();
      const parent = await seed(caller);
      const child = await seed(caller, { parent_task_id: parent.task_id });
      await expect(h.call('tasks.get', { task_id: child.task_id }, caller)).resolves.toMatchObject({
        task: { parent_task_id: parent.task_id },
        parent_task: { task_id: parent.task_id, status: 'pending' },
      });
    });

    it("answers not_found for another tenant's task, another user's and a missing one", async () => {
      const owner = newCaller();
      const task = await seed(owner);
      for (const caller of [newCaller({ scopes: ['console:fleet'] }), { ...owner, user: 'bob' }]) {
        await expect(outcomeOf(h.call('tasks.get', { task_id: task.task_id }, caller))).resolves.toMatchObject({
          ok: false,
          code: 'not_found',
        });
      }
      await expect(outcomeOf(h.call('tasks.get', { task_id: 'missing' }, owner))).resolves.toMatchObject({
        ok: false,
        code: 'not_found',
      });
    });

    it("answers the owner's other session not_found: reads filter by the full triple", async () => {
      const owner = newCaller();
      const task = await seed(owner);
      await expect(
        h.call('tasks.get', { task_id: task.task_id }, { ...owner, session: 'other' }),
      ).rejects.toMatchObject({ code: 'not_found' });
    });

    it("answers an admin not_found for another tenant's task unless it names that tenant", async () => {
      const owner = newCaller();
      const task = await seed(owner);
      const admin = newCaller({ scopes: ['admin'] });
      await expect(h.call('tasks.get', { task_id: task.task_id }, admin)).rejects.toMatchObject({
        code: 'not_found',
      });
      // Admin impersonation: the body names the tenant (the gateway reconciles and audits it).
      await expect(
        h.call('tasks.get', { identity: { tenant: owner.tenant }, task_id: task.task_id }, admin),
      ).resolves.toMatchObject({ task: { task_id: task.task_id, tenant: owner.tenant, user: owner.user } });
    });

    it('answers an admin naming one tenant not_found for a task of a third tenant', async () => {
      const task = await seed(newCaller());
      const admin = newCaller({ scopes: ['admin'] });
      await expect(
        h.call('tasks.get', { identity: { tenant: newCaller().tenant }, task_id: task.task_id }, admin),
      ).rejects.toMatchObject({ code: 'not_found' });
    });

    it('reads by the full triple for an admin within its own tenant', async () => {
      const owner = newCaller();
      const task = await seed(owner);
      const admin = { ...owner, user: 'root', scopes: ['admin'] };
      await expect(h.call('tasks.get', { task_id: task.task_id }, admin)).rejects.toMatchObject({
        code: 'not_found',
      });
      await expect(
        h.call('tasks.get', { identity: { tenant: owner.tenant }, task_id: task.task_id }, admin),
      ).rejects.toMatchObject({ code: 'not_found' });
      const own = await seed(admin);
      await expect(h.call('tasks.get', { task_id: own.task_id }, admin)).resolves.toBeDefined();
    });

    it("answers not_found to a caller without admin naming the task's tenant, console:fleet included", async () => {
      const owner = newCaller();
      const task = await seed(owner);
      for (const scopes of [[], ['console:fleet']]) {
        await expect(
          h.call('tasks.get', { identity: { tenant: owner.tenant }, task_id: task.task_id }, newCaller({ scopes })),
        ).rejects.toMatchObject({ code: 'not_found' });
      }
    });
  });

  describe('tasks.list', () => {
    it("projects the caller's session, newest first", async () => {
      const caller = newCaller();
      const older = await seed(caller, { created_at: '2030-01-01T00:00:00.000Z' });
      const newer = await seed(caller, { created_at: '2030-01-02T00:00:00.000Z' });
      await seed({ ...caller, session: 'another' });
      await seed({ ...caller, user: 'bob' });
      const page = await list(caller);
      expect(page.items.map((t) => t.task_id)).toEqual([newer.task_id, older.task_id]);
      expect(page.protocol_version).toBe('0.1.0');
      expect((await list({ ...caller, session: 'another' })).items).toHaveLength(1);
    });

    it('filters by status and counts every status over the rest of the filter', async () => {
      const caller = newCaller();
      const [a, b, c] = [await seed(caller), await seed(caller), await seed(caller)];
      await h.tasks.markRunning(a.task_id);
      await h.tasks.markRunning(b.task_id);
      await h.tasks.markTerminal(b.task_id, 'failed', { code: 'tool_failed' });
      const page = await list(caller, { filter: { status: ['failed', 'pending'] } });
      expect(page.items.map((t) => t.task_id).sort()).toEqual([b.task_id, c.task_id].sort());
      expect(page.counts).toEqual({ pending: 1, running: 1, paused: 0, complete: 0, failed: 1, cancelled: 0 });
      expect(page.counts_complete).toBe(true);
      const failed = page.items.find((t) => t.task_id === b.task_id);
      expect(failed).toMatchObject({ status: 'failed', error_code: 'tool_failed' });
      expect(failed).toHaveProperty('ended_at');
    });

    it('filters by kind and parent', async () => {
      const caller = newCaller();
      const parent = await seed(caller);
      const child = await seed(caller, { parent_task_id: parent.task_id, kind: 'background' });
      expect((await list(caller, { filter: { kind: ['background'] } })).items.map((t) => t.task_id)).toEqual([
        child.task_id,
      ]);
      expect((await list(caller, { filter: { parent_task_id: parent.task_id } })).items.map((t) => t.task_id)).toEqual([
        child.task_id,
      ]);
    });

    it('filters by time window, since inclusive and until exclusive, across offsets', async () => {
      const caller = newCaller();
      const days = ['2030-01-01', '2030-01-02', '2030-01-03'].map((d) => `${d}T00:00:00.000Z`);
      const seeded = [];
      for (const created of days) seeded.push(await seed(caller, { created_at: created }));
      const page = await list(caller, {
        filter: { since: '2030-01-02T01:00:00+01:00', until: '2030-01-03T00:00:00Z' },
      });
      expect(page.items.map((t) => t.task_id)).toEqual([seeded[1]!.task_id]);
    });

    it('matches free text case-insensitively and literally against query and goal', async () => {
      const caller = newCaller();
      const byQuery = await seed(caller, { query: 'Book a FLIGHT to Rome' });
      const byGoal = await seed(caller, { query: 'travel', goal: 'find a flight (cheap)' });
      await seed(caller, { query: 'nothing relevant' });
      await seed(caller, { query: 'flxght' });
      const page = await list(caller, { filter: { text: 'flight' } });
      expect(page.items.map((t) => t.task_id).sort()).toEqual([byQuery.task_id, byGoal.task_id].sort());
      expect((await list(caller, { filter: { text: 'fl.ght' } })).items).toEqual([]);
      expect((await list(caller, { filter: { text: '(cheap)' } })).items.map((t) => t.task_id)).toEqual([
        byGoal.task_id,
      ]);
    });

    it('pages with a cursor without skipping or repeating', async () => {
      const caller = newCaller();
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1)
        ids.push((await seed(caller, { created_at: `2030-01-0${i + 1}T00:00:00.000Z` })).task_id);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await list(caller, { limit: 2, ...(cursor === undefined ? {} : { cursor }) });
        seen.push(...page.items.map((t) => t.task_id));
        expect(page.counts.pending).toBe(5);
        cursor = page.next_cursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(ids.reverse());
    });

    it('refuses a malformed cursor with invalid_request', async () => {
      await expect(outcomeOf(list(newCaller(), { cursor: 'bogus' }))).resolves.toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });

    it('fans in across tenants for an admin naming tenant_ids', async () => {
      const one = newCaller();
      const two = newCaller({ user: 'bob', session: 'x' });
      const a = await seed(one);
      const b = await seed(two);
      await seed(newCaller());
      const page = await list(newCaller({ scopes: ['admin'] }), { filter: { tenant_ids: [one.tenant, two.tenant] } });
      expect(page.items.map((t) => t.task_id).sort()).toEqual([a.task_id, b.task_id].sort());
      expect(page.counts.pending).toBe(2);
    });

    it('refuses tenant_ids without admin; console:fleet is not consulted', async () => {
      const caller = newCaller({ scopes: ['console:fleet'] });
      await expect(outcomeOf(list(caller, { filter: { tenant_ids: ['elsewhere'] } }))).resolves.toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
      await expect(outcomeOf(list(caller, { filter: { tenant_ids: [caller.tenant] } }))).resolves.toMatchObject({
        ok: false,
        code: 'identity_scope_required',
      });
    });
  });

  describe('reply size', () => {
    const budget = () => replyBudgetBytes(h.bus.nc.info?.max_payload);
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

    it('ends tasks.list pages by size: 50 tasks of 12,000-character queries list whole, none skipped or repeated', async () => {
      const caller = newCaller();
      const ids: string[] = [];
      for (let i = 0; i < 50; i += 1) {
        const created = new Date(Date.UTC(2030, 0, 1, 0, i)).toISOString();
        ids.push((await seed(caller, { query: `${i} ${'q'.repeat(12_000)}`, created_at: created })).task_id);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await list(caller, cursor === undefined ? {} : { cursor });
        pages += 1;
        expect(bytes(page)).toBeLessThanOrEqual(budget() + 1024);
        expect(page.items.filter((t) => 'abbreviated' in t || t.query.length < 12_000)).toEqual([]);
        expect(page.counts.pending).toBe(50);
        seen.push(...page.items.map((t) => t.task_id));
        cursor = page.next_cursor;
      } while (cursor !== undefined && pages < 50);
      expect(pages).toBeGreaterThan(1);
      expect(seen).toEqual(ids.reverse());
    });

    it('abbreviates, in tasks.list and tasks.get, a task whose query alone is larger than a reply', async () => {
      const caller = newCaller();
      const huge = await seed(caller, { query: 'h'.repeat(900_000), created_at: '2030-01-02T00:00:00.000Z' });
      const small = await seed(caller, { query: 'small', created_at: '2030-01-01T00:00:00.000Z' });
      const abbreviated = {
        task_id: huge.task_id,
        query: 'h'.repeat(ABBREVIATED_CHARS),
        goal: 'h'.repeat(ABBREVIATED_CHARS),
        abbreviated: ['query', 'goal'],
      };
      const seen: TaskView[] = [];
      let cursor: string | undefined;
      do {
        const page = await list(caller, cursor === undefined ? {} : { cursor });
        seen.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== undefined);
      expect(seen).toMatchObject([abbreviated, { task_id: small.task_id, query: 'small' }]);
      expect(seen[1]).not.toHaveProperty('abbreviated');
      await expect(h.call('tasks.get', { task_id: huge.task_id }, caller)).resolves.toMatchObject({
        task: abbreviated,
      });
      await expect(h.call('tasks.get', { task_id: small.task_id }, caller)).resolves.not.toHaveProperty(
        'task.abbreviated',
      );
    });
  });

  describe('snapshot sequence', () => {
    it('is the stream position before the read: resuming after it misses nothing and repeats nothing', async () => {
      const caller = newCaller();
      const first = await h.start(caller);
      const page = await list(caller);
      expect(page.items.map((t) => t.task_id)).toEqual([first.task_id]);
      expect(await storedEvents(h.bus, { tenant: caller.tenant }, page.sequence)).toEqual([]);
      const second = await h.start(caller);
      const after = await storedEvents(h.bus, { tenant: caller.tenant }, page.sequence);
      expect(after.map((f) => f.run)).toEqual([second.task_id]);
    });

    /**
     * The read handlers over a repository that, once, right after its store
     * read, lets `write` change the store and publish the change's event:
     * a write landing between the sequence read and the store read when the
     * sequence is read first, before the sequence read if the order were swapped.
     */
    function readsWithWriteAfterStoreRead(write: () => Promise<void>) {
      let pending: (() => Promise<void>) | undefined = write;
      const afterRead = async <T>(read: Promise<T>): Promise<T> => {
        const result = await read;
        const next = pending;
        pending = undefined;
        await next?.();
        return result;
      };
      const tasks: TaskRepository = {
        ...h.tasks,
        getTask: (taskId) => afterRead(h.tasks.getTask(taskId)),
        listTasks: (filter, page) => afterRead(h.tasks.listTasks(filter, page)),
        listOpenPauses: (filter, page) => afterRead(h.tasks.listOpenPauses(filter, page)),
      };
      const logger = createLogger({ name: 'reads', level: 'silent' });
      const deps: ApiDeps = {
        tasks,
        bus: h.bus,
        rpc: createRpcClient(h.bus),
        publisher: publisher(),
        logger,
        settings: { defaultAgentId: 'default', controlReplyTimeoutMs: 300, dependencyTimeoutMs: 1_000 },
      };
      const handlers: Record<string, RpcHandler> = {
        ...createTaskReadHandlers(deps),
        'pause.list': createPauseListHandler(deps),
      };
      return async <T>(method: string, caller: VerifiedIdentity, body: Record<string, unknown> = {}): Promise<T> => {
        const request = getMethod(method)!.request.parse({ identity: {}, ...body });
        return (await handlers[method]!({ method, identity: caller, body: request })) as T;
      };
    }

    let eventPublisher: EventPublisher | undefined;
    const publisher = () =>
      (eventPublisher ??= createEventPublisher(h.bus, {
        source: 'test',
        logger: createLogger({ name: 'publisher', level: 'silent' }),
      }));

    it('tasks.list: a task started between the two reads is replayed after the sequence, never lost', async () => {
      const caller = newCaller();
      const first = await h.start(caller);
      let late: string | undefined;
      const read = readsWithWriteAfterStoreRead(async () => {
        late = (await h.start(caller)).task_id;
      });
      const page = await read<ListPage>('tasks.list', caller);
      const listed = page.items.map((t) => t.task_id);
      expect(listed).toEqual([first.task_id]);
      // Every spawn the sequence covers is in the snapshot; the late one comes after it.
      const spawns = await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.spawned' });
      expect(spawns.filter((f) => f.sequence <= page.sequence).map((f) => f.run)).toEqual([first.task_id]);
      const replayed = await storedEvents(h.bus, { tenant: caller.tenant }, page.sequence);
      expect(replayed.map((f) => f.run)).toContain(late);
    });

    it('tasks.get: a status change between the two reads is replayed after the sequence, never lost', async () => {
      const caller = newCaller();
      const task = await seed(caller);
      const read = readsWithWriteAfterStoreRead(async () => {
        const prior = await h.tasks.markRunning(task.task_id);
        await publisher().publish({
          type: 'task.started',
          identity: { ...caller, run: task.task_id },
          payload: { TaskID: task.task_id, PriorState: prior },
        });
      });
      const detail = await read<{ task: TaskView; sequence: number }>('tasks.get', caller, { task_id: task.task_id });
      expect(detail.task.status).toBe('pending');
      const [started] = await storedEvents(h.bus, { tenant: caller.tenant, type: 'task.started' });
      expect(started!.sequence).toBeGreaterThan(detail.sequence);
    });

    it('pause.list: a pause recorded between the two reads is replayed after the sequence, never lost', async () => {
      const caller = newCaller();
      const task = await seed(caller);
      const parked = pauseRecord(caller, task.task_id);
      const read = readsWithWriteAfterStoreRead(async () => {
        await h.insertPause(parked);
        await publisher().publish({
          type: 'pause.requested',
          identity: { ...caller, run: task.task_id },
          payload: { Token: parked.token, Reason: parked.reason },
        });
      });
      const page = await read<{ items: unknown[]; sequence: number }>('pause.list', caller);
      expect(page.items).toEqual([]);
      const [requested] = await storedEvents(h.bus, { tenant: caller.tenant, type: 'pause.requested' });
      expect(requested!.sequence).toBeGreaterThan(page.sequence);
    });

    it('is carried by tasks.get and pause.list too', async () => {
      const caller = newCaller();
      const { task_id: taskId } = await h.start(caller);
      const [spawned] = await storedEvents(h.bus, { tenant: caller.tenant });
      const detail = (await h.call('tasks.get', { task_id: taskId }, caller)) as { sequence: number };
      const pauses = (await h.call('pause.list', {}, caller)) as { sequence: number };
      expect(detail.sequence).toBeGreaterThanOrEqual(spawned!.sequence);
      expect(pauses.sequence).toBeGreaterThanOrEqual(detail.sequence);
    });
  });
});

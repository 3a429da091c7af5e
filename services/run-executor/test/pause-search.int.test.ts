import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { ABBREVIATED_CHARS, replyBudgetBytes } from '../src/domain/reply-size.ts';
import type { TaskRecord } from '../src/domain/task.ts';
import { newCaller, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';
import { pauseRecord as pause, seedTask } from './helpers/seed.ts';

describe('pause.list and search.tasks', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  const seed = (caller: VerifiedIdentity, overrides: Partial<TaskRecord> = {}) => seedTask(h, caller, overrides);

  describe('pause.list', () => {
    it("lists the open pauses of the caller's session, oldest first", async () => {
      const caller = newCaller();
      const task = await seed(caller);
      const first = pause(caller, task.task_id, { requested_at: '2030-01-01T00:00:00.000Z' });
      const second = pause(caller, task.task_id, {
        requested_at: '2030-01-02T00:00:00.000Z',
        kind: 'pause',
        tool: undefined,
      });
      await h.insertPause(second);
      await h.insertPause(first);
      await h.insertPause(
        pause(caller, task.task_id, { resolved_at: '2030-01-03T00:00:00.000Z', decision: 'approve' }),
      );
      await h.insertPause(pause({ ...caller, session: 'other' }, task.task_id));
      await h.insertPause(pause({ ...caller, user: 'bob' }, task.task_id));
      const page = (await h.call('pause.list', {}, caller)) as {
        items: Record<string, unknown>[];
        protocol_version: string;
      };
      expect(page.items).toEqual([
        {
          token: first.token,
          task_id: task.task_id,
          reason: 'approval needed',
          tool: 'wire_money',
          requested_at: first.requested_at,
          tenant: caller.tenant,
          user: caller.user,
          session: caller.session,
          tags: ['finance'],
          args_summary: { amount: 10 },
          kind: 'approval',
        },
        expect.objectContaining({ token: second.token, kind: 'pause' }),
      ]);
      expect(page.items[1]).not.toHaveProperty('tool');
      expect(page.protocol_version).toBe('0.1.0');
    });

    it('narrows by task_id and pages', async () => {
      const caller = newCaller();
      const [a, b] = [await seed(caller), await seed(caller)];
      for (let i = 0; i < 3; i += 1) {
        await h.insertPause(pause(caller, a.task_id, { requested_at: `2030-01-0${i + 1}T00:00:00.000Z` }));
      }
      await h.insertPause(pause(caller, b.task_id));
      const first = (await h.call('pause.list', { filter: { task_id: a.task_id }, limit: 2 }, caller)) as {
        items: { task_id: string }[];
        next_cursor?: string;
      };
      expect(first.items).toHaveLength(2);
      const rest = (await h.call(
        'pause.list',
        { filter: { task_id: a.task_id }, limit: 2, cursor: first.next_cursor },
        caller,
      )) as { items: { task_id: string }[]; next_cursor?: string };
      expect(rest.items).toHaveLength(1);
      expect(rest.next_cursor).toBeUndefined();
      expect([...first.items, ...rest.items].every((p) => p.task_id === a.task_id)).toBe(true);
    });

    it('fans in across tenants for an admin only', async () => {
      const owner = newCaller();
      const task = await seed(owner);
      await h.insertPause(pause(owner, task.task_id));
      const admin = await h.call(
        'pause.list',
        { filter: { tenant_ids: [owner.tenant] } },
        newCaller({ scopes: ['admin'] }),
      );
      expect((admin as { items: unknown[] }).items).toHaveLength(1);
      const fleet = await outcomeOf(
        h.call('pause.list', { filter: { tenant_ids: [owner.tenant] } }, newCaller({ scopes: ['console:fleet'] })),
      );
      expect(fleet).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });
  });

  describe('search.tasks', () => {
    const search = (caller: VerifiedIdentity, body: Record<string, unknown>) =>
      h.call('search.tasks', body, caller) as Promise<{ items: Record<string, unknown>[]; next_cursor?: string }>;

    it("finds the caller's tasks in every session of theirs by free text", async () => {
      const caller = newCaller();
      const here = await seed(caller, { query: 'Quarterly report draft' });
      const there = await seed({ ...caller, session: 'other' }, { query: 'the REPORT numbers' });
      await seed({ ...caller, user: 'bob' }, { query: 'report by bob' });
      await seed(caller, { query: 'unrelated' });
      const result = await search(caller, { query: 'report' });
      expect(result.items.map((hit) => hit.id).sort()).toEqual([here.task_id, there.task_id].sort());
      expect(result.items.find((hit) => hit.id === here.task_id)).toMatchObject({
        kind: 'task',
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        snippet: expect.stringContaining('report'),
        occurred_at: here.created_at,
        record: { task_id: here.task_id },
      });
    });

    it('narrows by one session and by status without a claim', async () => {
      const caller = newCaller();
      const a = await seed(caller);
      await seed({ ...caller, session: 'other' });
      const b = await seed(caller);
      await h.tasks.markRunning(b.task_id);
      expect((await search(caller, { filter: { session_ids: [caller.session] } })).items).toHaveLength(2);
      expect(
        (await search(caller, { filter: { session_ids: [caller.session], status: ['pending'] } })).items.map(
          (i) => i.id,
        ),
      ).toEqual([a.task_id]);
    });

    it('refuses another user or several sessions without a claim with scope_mismatch', async () => {
      const caller = newCaller();
      for (const filter of [{ user_ids: ['bob'] }, { tenant_ids: ['elsewhere'] }, { session_ids: ['a', 'b'] }]) {
        await expect(outcomeOf(search(caller, { filter }))).resolves.toMatchObject({
          ok: false,
          code: 'scope_mismatch',
        });
      }
    });

    it('fans in for console:fleet naming tenants and users', async () => {
      const owner = newCaller();
      const task = await seed({ ...owner, user: 'bob' });
      const fleet = newCaller({ scopes: ['console:fleet'] });
      const result = await search(fleet, { filter: { tenant_ids: [owner.tenant], user_ids: ['bob'] } });
      expect(result.items.map((i) => i.id)).toEqual([task.task_id]);
    });

    it('pages newest first', async () => {
      const caller = newCaller();
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1)
        ids.push((await seed(caller, { created_at: `2030-02-0${i + 1}T00:00:00.000Z` })).task_id);
      const first = await search(caller, { limit: 2 });
      const second = await search(caller, { limit: 2, cursor: first.next_cursor });
      expect([...first.items, ...second.items].map((i) => i.id)).toEqual(ids.reverse());
      expect(second.next_cursor).toBeUndefined();
    });

    it('ends pages by size: 50 tasks of 12,000-character queries are all found, none repeated', async () => {
      const caller = newCaller();
      const ids: string[] = [];
      for (let i = 0; i < 50; i += 1) {
        const created = new Date(Date.UTC(2030, 1, 1, 0, i)).toISOString();
        ids.push((await seed(caller, { query: `needle ${'q'.repeat(12_000)}`, created_at: created })).task_id);
      }
      const budget = replyBudgetBytes(h.bus.nc.info?.max_payload);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await search(caller, { query: 'needle', ...(cursor === undefined ? {} : { cursor }) });
        pages += 1;
        expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(budget + 1024);
        seen.push(...page.items.map((hit) => hit.id as string));
        cursor = page.next_cursor;
      } while (cursor !== undefined && pages < 50);
      expect(pages).toBeGreaterThan(1);
      expect(seen).toEqual(ids.reverse());
    });

    it('finds a task whose query alone is larger than a reply, its record abbreviated', async () => {
      const caller = newCaller();
      const huge = await seed(caller, { query: `needle ${'h'.repeat(900_000)}` });
      const result = await search(caller, { query: 'needle' });
      expect(result.items).toHaveLength(1);
      const record = result.items[0]!.record as { task_id: string; query: string; abbreviated?: string[] };
      expect(record).toMatchObject({ task_id: huge.task_id, abbreviated: ['query', 'goal'] });
      expect(record.query).toHaveLength(ABBREVIATED_CHARS);
    });
  });
});

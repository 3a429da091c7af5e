import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SearchResponse,
  SessionsInspectResponse,
  SessionsListResponse,
  SessionsSetTitleResponse,
} from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import type { Bed } from './support.ts';
import { bodyIdentity, freshIdentity, nextMillisecond, sessionEvents, sibling, startBed } from './support.ts';

interface SessionView {
  session_id: string;
  tenant: string;
  user: string;
  status: string;
  title?: string;
  title_source?: string;
}
interface ListResponse {
  items: SessionView[];
  next_cursor?: string;
}
interface SearchHitView {
  kind: string;
  id: string;
  tenant: string;
  user: string;
  title?: string;
}

describe('session reads and titles', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ env: { SESSION_IDLE_CLOSE_SECONDS: '0' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  const list = async (identity: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    (await bed.call('sessions.list', { identity: bodyIdentity(identity), ...body }, identity)) as ListResponse;
  const search = async (identity: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    (await bed.call('search.sessions', { identity: bodyIdentity(identity), ...body }, identity)) as {
      items: SearchHitView[];
      next_cursor?: string;
    };
  const titled = async (identity: VerifiedIdentity, title: string) => {
    await bed.admit(identity);
    await bed.call('sessions.set_title', { identity: bodyIdentity(identity), title }, identity);
  };

  describe('sessions.list', () => {
    it("lists the caller's sessions and nobody else's", async () => {
      const me = freshIdentity();
      const mine = [me, sibling(me), sibling(me)];
      for (const s of mine) await bed.admit(s);
      const sameTenantOtherUser = { ...freshIdentity(), tenant: me.tenant };
      const otherTenantSameUser = { ...freshIdentity(), user: me.user };
      await bed.admit(sameTenantOtherUser);
      await bed.admit(otherTenantSameUser);
      const response = await list(me);
      expect(SessionsListResponse.safeParse(response).success).toBe(true);
      expect(response.items.map((s) => s.session_id).sort()).toEqual(mine.map((s) => s.session).sort());
      expect(response.items.every((s) => s.tenant === me.tenant && s.user === me.user && s.status === 'open')).toBe(
        true,
      );
    });

    it('lists the most recently seen session first', async () => {
      const me = freshIdentity();
      const [a, b] = [me, sibling(me)];
      await bed.admit(a);
      await nextMillisecond();
      await bed.admit(b);
      await nextMillisecond();
      await bed.admit(a);
      expect((await list(me)).items.map((s) => s.session_id)).toEqual([a.session, b.session]);
    });

    it('pages with limit and cursor without repeating or skipping a session', async () => {
      const me = freshIdentity();
      const all = [me, ...Array.from({ length: 6 }, () => sibling(me))];
      for (const s of all) await bed.admit(s);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await list(me, { limit: 4, ...(cursor === undefined ? {} : { cursor }) });
        expect(page.items.length).toBeLessThanOrEqual(4);
        seen.push(...page.items.map((s) => s.session_id));
        cursor = page.next_cursor;
      } while (cursor !== undefined);
      expect(seen.sort()).toEqual(all.map((s) => s.session).sort());
    });

    it('refuses a limit beyond the maximum of 500', async () => {
      const me = freshIdentity();
      const outcome = await outcomeOf(bed.call('sessions.list', { identity: {}, limit: 501 }, me));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it('refuses filter.tenant_ids naming another tenant without admin or console:fleet', async () => {
      const me = freshIdentity();
      const outcome = await outcomeOf(
        bed.call('sessions.list', { identity: {}, filter: { tenant_ids: [me.tenant, 'someone-else'] } }, me),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it("accepts filter.tenant_ids naming only the caller's tenant as the own-data read", async () => {
      const me = freshIdentity();
      await bed.admit(me);
      await bed.admit({ ...freshIdentity(), tenant: me.tenant });
      const response = await list(me, { filter: { tenant_ids: [me.tenant] } });
      expect(response.items.map((s) => s.session_id)).toEqual([me.session]);
    });

    it('fans in across every user of the named tenants with console:fleet or admin', async () => {
      const target = freshIdentity();
      const colleague = { ...freshIdentity(), tenant: target.tenant };
      await bed.admit(target);
      await bed.admit(colleague);
      for (const scopes of [['console:fleet'], ['admin']]) {
        const operator = freshIdentity(scopes);
        const response = await list(operator, { filter: { tenant_ids: [target.tenant] } });
        expect(response.items.map((s) => s.session_id).sort()).toEqual([target.session, colleague.session].sort());
      }
    });

    it('matches filter.text against titles, case-insensitively', async () => {
      const me = freshIdentity();
      const [a, b] = [me, sibling(me)];
      await titled(a, 'Budget review Q3');
      await titled(b, 'Holiday plans');
      const response = await list(me, { filter: { text: 'budget' } });
      expect(response.items.map((s) => s.session_id)).toEqual([a.session]);
    });
  });

  describe('sessions.inspect', () => {
    it('inspects the verified session by default and a sibling by session_id', async () => {
      const me = freshIdentity();
      const other = sibling(me);
      await bed.admit(me);
      await bed.admit(other);
      const own = await bed.call('sessions.inspect', { identity: bodyIdentity(me) }, me);
      expect(SessionsInspectResponse.safeParse(own).success).toBe(true);
      expect(own).toMatchObject({
        session: { session_id: me.session, status: 'open', task_count: 0 },
        artifact_count: 0,
      });
      const sib = await bed.call('sessions.inspect', { identity: bodyIdentity(me), session_id: other.session }, me);
      expect(sib).toMatchObject({ session: { session_id: other.session } });
    });

    it("answers not_found for another owner's session id", async () => {
      const owner = freshIdentity();
      await bed.admit(owner);
      const stranger = freshIdentity();
      const outcome = await outcomeOf(
        bed.call('sessions.inspect', { identity: bodyIdentity(stranger), session_id: owner.session }, stranger),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
      const sameTenant = { ...freshIdentity(), tenant: owner.tenant };
      const outcome2 = await outcomeOf(
        bed.call('sessions.inspect', { identity: bodyIdentity(sameTenant), session_id: owner.session }, sameTenant),
      );
      expect(outcome2).toMatchObject({ ok: false, code: 'not_found' });
    });

    it('answers not_found for a session never used', async () => {
      const outcome = await outcomeOf(bed.call('sessions.inspect', { identity: {} }, freshIdentity()));
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
    });
  });

  describe('sessions.set_title', () => {
    it('sets a manual title with session.title_changed Source manual', async () => {
      const me = freshIdentity();
      await bed.admit(me);
      const response = await bed.call(
        'sessions.set_title',
        { identity: bodyIdentity(me), title: '  Quarterly plan  ' },
        me,
      );
      expect(SessionsSetTitleResponse.safeParse(response).success).toBe(true);
      expect(response).toMatchObject({ session: { title: 'Quarterly plan', title_source: 'manual' } });
      const changed = (await sessionEvents(bed.bus, me)).filter((e) => e.type === 'session.title_changed');
      expect(changed.map((e) => e.payload)).toEqual([{ SessionID: me.session, Source: 'manual' }]);
    });

    it('titles a sibling session of the same owner, narrating it on that session', async () => {
      const me = freshIdentity();
      const other = sibling(me);
      await bed.admit(me);
      await bed.admit(other);
      await bed.call(
        'sessions.set_title',
        { identity: bodyIdentity(me), session_id: other.session, title: 'Sibling' },
        me,
      );
      const inspected = await bed.call('sessions.inspect', { identity: {}, session_id: other.session }, me);
      expect(inspected).toMatchObject({ session: { title: 'Sibling', title_source: 'manual' } });
      const onSibling = (await sessionEvents(bed.bus, other)).filter((e) => e.type === 'session.title_changed');
      expect(onSibling.map((e) => e.payload)).toEqual([{ SessionID: other.session, Source: 'manual' }]);
    });

    it('refuses a body identity whose tenant or user differs from the verified one with identity_required', async () => {
      const me = freshIdentity();
      await bed.admit(me);
      for (const identity of [
        { ...bodyIdentity(me), user: 'someone' },
        { ...bodyIdentity(me), tenant: 'elsewhere' },
      ]) {
        const outcome = await outcomeOf(
          bed.call('sessions.set_title', { identity, title: 'x' }, freshIdentity(['admin'])),
        );
        expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
        const own = await outcomeOf(bed.call('sessions.set_title', { identity, title: 'x' }, me));
        expect(own).toMatchObject({ ok: false, code: 'identity_required' });
      }
    });

    it("answers not_found for another owner's session id, even to admin", async () => {
      const owner = freshIdentity();
      await bed.admit(owner);
      const admin = freshIdentity(['admin']);
      const outcome = await outcomeOf(
        bed.call('sessions.set_title', { identity: {}, session_id: owner.session, title: 'x' }, admin),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
    });

    it('refuses a title longer than 256 characters', async () => {
      const me = freshIdentity();
      await bed.admit(me);
      const outcome = await outcomeOf(bed.call('sessions.set_title', { identity: {}, title: 'x'.repeat(257) }, me));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('search.sessions', () => {
    it("finds the caller's sessions whose title holds every word of the query", async () => {
      const me = freshIdentity();
      const [a, b, c] = [me, sibling(me), sibling(me)];
      await titled(a, 'Trip to Lisbon in May');
      await titled(b, 'Lisbon restaurants');
      await titled(c, 'Tax return');
      const stranger = { ...freshIdentity(), tenant: me.tenant };
      await titled(stranger, 'Lisbon in May too');
      const response = await search(me, { query: 'lisbon MAY' });
      expect(SearchResponse.safeParse(response).success).toBe(true);
      expect(response.items.map((h) => h.id)).toEqual([a.session]);
      expect(response.items[0]).toMatchObject({
        kind: 'session',
        tenant: me.tenant,
        user: me.user,
        title: 'Trip to Lisbon in May',
      });
      const lisbon = await search(me, { query: 'lisbon' });
      expect(lisbon.items.map((h) => h.id).sort()).toEqual([a.session, b.session].sort());
    });

    it('lists every own session newest first without a query', async () => {
      const me = freshIdentity();
      const [a, b] = [me, sibling(me)];
      await bed.admit(a);
      await nextMillisecond();
      await bed.admit(b);
      expect((await search(me)).items.map((h) => h.id)).toEqual([b.session, a.session]);
    });

    it('narrows to one session_id without a claim and refuses several with scope_mismatch', async () => {
      const me = freshIdentity();
      const other = sibling(me);
      await titled(me, 'Alpha');
      await titled(other, 'Alpha two');
      const one = await search(me, { query: 'alpha', filter: { session_ids: [other.session] } });
      expect(one.items.map((h) => h.id)).toEqual([other.session]);
      const several = await outcomeOf(
        bed.call('search.sessions', { identity: {}, filter: { session_ids: [me.session, other.session] } }, me),
      );
      expect(several).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it('refuses tenant_ids or user_ids beyond the caller without a claim with scope_mismatch', async () => {
      const me = freshIdentity();
      for (const filter of [{ tenant_ids: ['elsewhere'] }, { user_ids: ['someone'] }]) {
        const outcome = await outcomeOf(bed.call('search.sessions', { identity: {}, filter }, me));
        expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
      }
    });

    it('searches other tenants and users with console:fleet', async () => {
      const target = freshIdentity();
      await titled(target, 'Fleet visible');
      const operator = freshIdentity(['console:fleet']);
      const response = await search(operator, {
        query: 'fleet',
        filter: { tenant_ids: [target.tenant], user_ids: [target.user] },
      });
      expect(response.items.map((h) => h.id)).toEqual([target.session]);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { skillContentHash } from '../src/domain/skills.ts';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface SkillView {
  name: string;
  description?: string;
  content: string;
  triggers: string[];
  origin: string;
  scope: string;
  content_hash: string;
  updated_at: string;
}
interface Upserted {
  skill: SkillView;
  idempotent: boolean;
}

const CITE = {
  name: 'cite',
  description: 'Cite sources',
  content: 'Always cite your sources.',
  triggers: ['research'],
};

/** The three tiers: method prefix, scope, extra body, and the claim the caller needs. */
const TIERS = [
  ['agent_config.skills', 'tenant', {}, ['admin']],
  ['agent_config.skills', 'agent', { agent_id: 'helper' }, ['admin']],
  ['agent_config.user.skills', 'user', {}, []],
  ['agent_config.session.skills', 'session', {}, []],
] as const;

describe('agent_config skills', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('skills');
  });

  afterAll(async () => {
    await h?.stop();
  });

  describe.each(TIERS)('%s (%s scope)', (prefix, scope, extra, scopes) => {
    const caller = () => h.caller([...scopes]);
    const upsert = (who: VerifiedIdentity, body: Record<string, unknown>) =>
      h.call<Upserted>(`${prefix}.upsert`, { ...extra, ...body }, who);
    const list = (who: VerifiedIdentity, body: Record<string, unknown> = {}) =>
      h.call<{ items: SkillView[]; next_cursor?: string }>(`${prefix}.list`, { ...extra, ...body }, who);

    it('upserts a skill and publishes skill.upserted with the spec keys', async () => {
      const who = caller();
      const result = await upsert(who, { skill: CITE });
      expect(result).toEqual({
        skill: {
          ...CITE,
          origin: 'manual',
          scope,
          content_hash: skillContentHash(CITE),
          updated_at: expect.any(String),
        },
        idempotent: false,
      });
      const [frame] = await h.events(who.tenant, 'skill.upserted');
      expect(payloadKeys(frame)).toEqual(['ContentHash', 'Idempotent', 'Name', 'Origin', 'Scope']);
      expect(frame?.payload).toEqual({
        Name: 'cite',
        Origin: 'manual',
        Scope: scope,
        ContentHash: skillContentHash(CITE),
        Idempotent: false,
      });
    });

    it('answers idempotent for the same content again, writing nothing', async () => {
      const who = caller();
      const first = await upsert(who, { skill: CITE });
      const again = await upsert(who, { skill: { ...CITE } });
      expect(again).toEqual({ skill: first.skill, idempotent: true });
      const frames = await h.events(who.tenant, 'skill.upserted');
      expect(frames.map((f) => (f.payload as { Idempotent: boolean }).Idempotent)).toEqual([false, true]);
      const changed = await upsert(who, { skill: { ...CITE, content: 'Cite, always.' } });
      expect(changed.idempotent).toBe(false);
      expect(changed.skill.content_hash).not.toBe(first.skill.content_hash);
    });

    it('lists by name, paged', async () => {
      const who = caller();
      for (const name of ['b', 'a', 'c']) await upsert(who, { skill: { name, content: name } });
      const first = await list(who, { limit: 2 });
      expect(first.items.map((s) => s.name)).toEqual(['a', 'b']);
      const second = await list(who, { limit: 2, cursor: first.next_cursor });
      expect(second.items.map((s) => s.name)).toEqual(['c']);
      expect(second.next_cursor).toBeUndefined();
    });

    it('deletes a skill, publishing skill.deleted only when one went', async () => {
      const who = caller();
      await upsert(who, { skill: CITE });
      await expect(h.call(`${prefix}.delete`, { ...extra, name: 'cite' }, who)).resolves.toEqual({
        name: 'cite',
        deleted: true,
      });
      await expect(h.call(`${prefix}.delete`, { ...extra, name: 'cite' }, who)).resolves.toEqual({
        name: 'cite',
        deleted: false,
      });
      const frames = await h.events(who.tenant, 'skill.deleted');
      expect(frames).toHaveLength(1);
      expect(payloadKeys(frames[0])).toEqual(['Name']);
      expect(frames[0]?.payload).toEqual({ Name: 'cite' });
      expect((await list(who)).items).toEqual([]);
    });

    it('refuses a body identity naming someone else, publishing skill.identity_rejected', async () => {
      const who = caller();
      const outcome = await h.outcome(
        `${prefix}.upsert`,
        { ...extra, skill: CITE, identity: { user: 'mallory' } },
        who,
      );
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
      const [frame] = await h.events(who.tenant, 'skill.identity_rejected');
      expect(payloadKeys(frame)).toEqual(['Operation', 'Reason']);
      expect(frame?.payload).toMatchObject({ Operation: `${prefix}.upsert`, Reason: expect.stringContaining('user') });
      expect((await list(who)).items).toEqual([]);
    });

    it('refuses to overwrite a pack skill without overwrite, publishing skill.pack_overwrite_refused', async () => {
      const who = caller();
      await upsert(who, { skill: CITE, origin: 'pack:research' });
      const outcome = await h.outcome(`${prefix}.upsert`, { ...extra, skill: { ...CITE, content: 'mine' } }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'conflict' });
      const [frame] = await h.events(who.tenant, 'skill.pack_overwrite_refused');
      expect(payloadKeys(frame)).toEqual(['ExistingOrigin', 'IncomingOrigin', 'Name']);
      expect(frame?.payload).toEqual({ Name: 'cite', ExistingOrigin: 'pack:research', IncomingOrigin: 'manual' });
      const replaced = await upsert(who, { skill: { ...CITE, content: 'mine' }, overwrite: true });
      expect(replaced.skill).toMatchObject({ origin: 'manual', content: 'mine' });
    });

    it('stores a proposal without installing it, publishing skill.proposed with the spec keys', async () => {
      const who = caller();
      const proposed = await upsert(who, {
        skill: { name: 'tidy', description: 'Key sk-abcdefghijklmnopqrstuvwxyz0 tidy', content: 'Tidy up.' },
        origin: 'proposed',
        identity: { run: 'task-7' },
      });
      expect(proposed.skill.origin).toBe('proposed');
      expect(await h.events(who.tenant, 'skill.upserted')).toEqual([]);
      const [frame] = await h.events(who.tenant, 'skill.proposed');
      expect(payloadKeys(frame)).toEqual(
        [
          'ContentHash',
          'Name',
          'Origin',
          'OriginRef',
          'Promotion',
          'Reason',
          'RedactedTitleExcerpt',
          'RedactedTriggerExcerpt',
          'Result',
          'Scope',
        ].sort(),
      );
      expect(frame?.payload).toMatchObject({
        Name: 'tidy',
        Origin: 'proposed',
        Scope: scope,
        OriginRef: 'task-7',
        Result: 'proposed',
        Promotion: false,
        RedactedTitleExcerpt: 'Key [REDACTED] tidy',
      });
      expect(frame?.run).toBe('task-7');
    });

    it('promotes a proposal when it is installed', async () => {
      const who = caller();
      await upsert(who, { skill: CITE, origin: 'proposed' });
      const installed = await upsert(who, { skill: CITE });
      expect(installed.skill.origin).toBe('manual');
      const proposed = await h.events(who.tenant, 'skill.proposed');
      expect(proposed.map((f) => f.payload)).toMatchObject([
        { Result: 'proposed', Promotion: false },
        { Result: 'promoted', Promotion: true, Origin: 'manual' },
      ]);
      const [upserted] = await h.events(who.tenant, 'skill.upserted');
      expect(upserted?.payload).toMatchObject({ Name: 'cite', Origin: 'manual', Idempotent: false });
    });

    it('refuses a proposal over an installed skill', async () => {
      const who = caller();
      await upsert(who, { skill: CITE });
      const outcome = await h.outcome(
        `${prefix}.upsert`,
        { ...extra, skill: { ...CITE, content: 'x' }, origin: 'proposed' },
        who,
      );
      expect(outcome).toMatchObject({ ok: false, code: 'conflict' });
      const [frame] = await h.events(who.tenant, 'skill.proposed');
      expect(frame?.payload).toMatchObject({ Result: 'rejected', Promotion: false });
    });

    it.each([
      ['a bad name', { skill: { name: '-x', content: 'y' } }],
      ['empty content', { skill: { name: 'x', content: '' } }],
      ['an unknown origin', { skill: { name: 'x', content: 'y' }, origin: 'somewhere' }],
      ['an unknown skill member', { skill: { name: 'x', content: 'y', body: 'z' } }],
    ])('refuses %s with invalid_request', async (_what, body) => {
      expect(await h.outcome(`${prefix}.upsert`, { ...extra, ...body }, caller())).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });

  describe('scopes stay apart', () => {
    it('keeps tenant, agent, user and session skills of the same name separate', async () => {
      const admin = h.caller(['admin']);
      const other = { ...admin, user: 'bob', session: 's-2' };
      await h.call('agent_config.skills.upsert', { skill: { name: 'x', content: 'tenant' } }, admin);
      await h.call('agent_config.skills.upsert', { agent_id: 'helper', skill: { name: 'x', content: 'agent' } }, admin);
      await h.call('agent_config.user.skills.upsert', { skill: { name: 'x', content: 'alice' } }, admin);
      await h.call('agent_config.session.skills.upsert', { skill: { name: 'x', content: 'alice s-1' } }, admin);
      const contents = async (method: string, who: VerifiedIdentity, body: Record<string, unknown> = {}) =>
        (await h.call<{ items: SkillView[] }>(method, body, who)).items.map((s) => s.content);
      expect(await contents('agent_config.skills.list', admin)).toEqual(['tenant']);
      expect(await contents('agent_config.skills.list', admin, { agent_id: 'helper' })).toEqual(['agent']);
      expect(await contents('agent_config.skills.list', admin, { agent_id: 'other' })).toEqual([]);
      expect(await contents('agent_config.user.skills.list', admin)).toEqual(['alice']);
      expect(await contents('agent_config.session.skills.list', admin)).toEqual(['alice s-1']);
      expect(await contents('agent_config.user.skills.list', other)).toEqual([]);
      expect(await contents('agent_config.session.skills.list', { ...admin, session: 's-2' })).toEqual([]);
      expect(await contents('agent_config.skills.list', h.caller(['admin']))).toEqual([]);
    });

    it("cannot delete another user's skill", async () => {
      const alice = h.caller([]);
      await h.call('agent_config.user.skills.upsert', { skill: { name: 'x', content: 'mine' } }, alice);
      const bob = { ...alice, user: 'bob' };
      await expect(h.call('agent_config.user.skills.delete', { name: 'x' }, bob)).resolves.toEqual({
        name: 'x',
        deleted: false,
      });
      expect((await h.call<{ items: SkillView[] }>('agent_config.user.skills.list', {}, alice)).items).toHaveLength(1);
    });

    it('refuses a malformed list cursor with invalid_request', async () => {
      expect(await h.outcome('agent_config.user.skills.list', { cursor: 'nope' }, h.caller([]))).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });
});

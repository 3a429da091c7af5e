import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigChange, VerifiedIdentity } from '@ars/contracts';
import { applyChanges } from './helpers/apply-changes.ts';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Revision {
  revision_id: string;
  parent_revision_id?: string;
  content_hash: string;
  message?: string;
  config: Record<string, unknown>;
}
interface Diff {
  agent_id: string;
  from_revision_id: string;
  to_revision_id: string;
  changes: ConfigChange[];
}

const V1 = { prompt_layers: [{ name: 'base', text: 'Be brief.' }], llm_params: { model: 'a', temperature: 0.2 } };
const V2 = { prompt_layers: [{ name: 'base', text: 'Be thorough.' }], llm_params: { model: 'b' }, skills: ['cite'] };

describe('agent_config diff and rollback', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('history');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const write = async (admin: VerifiedIdentity, config: object) =>
    (await h.call<{ revision: Revision }>('agent_config.set_revision', { agent_id: 'helper', config }, admin)).revision;

  describe('diff', () => {
    it('lists every changed path with its before and after values', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      const second = await write(admin, V2);
      const diff = await h.call<Diff>(
        'agent_config.diff',
        { agent_id: 'helper', from_revision_id: first.revision_id, to_revision_id: second.revision_id },
        admin,
      );
      expect(diff).toEqual({
        agent_id: 'helper',
        from_revision_id: first.revision_id,
        to_revision_id: second.revision_id,
        changes: [
          { path: '/llm_params/model', op: 'replace', before: 'a', after: 'b' },
          { path: '/llm_params/temperature', op: 'remove', before: 0.2 },
          { path: '/prompt_layers/0/text', op: 'replace', before: 'Be brief.', after: 'Be thorough.' },
          { path: '/skills', op: 'add', after: ['cite'] },
        ],
      });
      expect(applyChanges(first.config, diff.changes)).toEqual(second.config);
    });

    it('diffs against the head when to_revision_id is absent', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      const head = await write(admin, V2);
      const diff = await h.call<Diff>(
        'agent_config.diff',
        { agent_id: 'helper', from_revision_id: first.revision_id },
        admin,
      );
      expect(diff.to_revision_id).toBe(head.revision_id);
      expect(applyChanges(V1, diff.changes)).toEqual(V2);
    });

    it('answers an empty diff between a revision and itself', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      const diff = await h.call<Diff>(
        'agent_config.diff',
        { agent_id: 'helper', from_revision_id: first.revision_id },
        admin,
      );
      expect(diff.changes).toEqual([]);
    });

    it("answers not_found for an unknown revision and for another tenant's", async () => {
      const owner = h.caller();
      const first = await write(owner, V1);
      expect(
        await h.outcome('agent_config.diff', { agent_id: 'helper', from_revision_id: 'nope' }, owner),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(
        await h.outcome('agent_config.diff', { agent_id: 'helper', from_revision_id: first.revision_id }, h.caller()),
      ).toMatchObject({ ok: false, code: 'not_found' });
    });

    it('refuses a missing from_revision_id with invalid_request', async () => {
      expect(await h.outcome('agent_config.diff', { agent_id: 'helper' }, h.caller())).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });

  describe('rollback', () => {
    it('writes a new head equal to the earlier revision', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      const second = await write(admin, V2);
      const restored = (
        await h.call<{ revision: Revision }>(
          'agent_config.rollback',
          { agent_id: 'helper', to_revision_id: first.revision_id },
          admin,
        )
      ).revision;
      expect(restored.revision_id).not.toBe(first.revision_id);
      expect(restored.parent_revision_id).toBe(second.revision_id);
      expect(restored.config).toEqual(first.config);
      expect(restored.content_hash).toBe(first.content_hash);
      expect(restored.message).toBe(`rollback to ${first.revision_id}`);
      const diff = await h.call<Diff>(
        'agent_config.diff',
        { agent_id: 'helper', from_revision_id: first.revision_id },
        admin,
      );
      expect(diff.changes).toEqual([]);
      const resolved = await h.service.rpc.call('agent-registry', '_agent.resolve', admin, {
        tenant: admin.tenant,
        agent_id: 'helper',
      });
      expect(resolved).toMatchObject({ revision_id: restored.revision_id, config: V1 });
    });

    it('publishes agent.config.revised and agent.config.reverted with the spec keys', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      const second = await write(admin, V2);
      const restored = (
        await h.call<{ revision: Revision }>(
          'agent_config.rollback',
          { agent_id: 'helper', to_revision_id: first.revision_id, message: 'undo' },
          admin,
        )
      ).revision;
      const [reverted] = await h.events(admin.tenant, 'agent.config.reverted');
      expect(payloadKeys(reverted)).toEqual(['AgentID', 'Author', 'FromRevisionID', 'OccurredAt', 'RevisionID']);
      expect(reverted?.payload).toMatchObject({
        Author: { tenant: admin.tenant, user: admin.user, session: admin.session, run: '' },
        AgentID: 'helper',
        RevisionID: restored.revision_id,
        FromRevisionID: first.revision_id,
      });
      const revised = await h.events(admin.tenant, 'agent.config.revised');
      expect(revised.at(-1)?.payload).toMatchObject({
        RevisionID: restored.revision_id,
        ParentRevisionID: second.revision_id,
        ContentHash: first.content_hash,
      });
    });

    it('refuses a stale parent_revision_id with conflict', async () => {
      const admin = h.caller();
      const first = await write(admin, V1);
      await write(admin, V2);
      expect(
        await h.outcome(
          'agent_config.rollback',
          { agent_id: 'helper', to_revision_id: first.revision_id, parent_revision_id: first.revision_id },
          admin,
        ),
      ).toMatchObject({ ok: false, code: 'conflict' });
    });

    it("answers not_found for an unknown revision and for another tenant's", async () => {
      const owner = h.caller();
      const first = await write(owner, V1);
      expect(
        await h.outcome('agent_config.rollback', { agent_id: 'helper', to_revision_id: 'nope' }, owner),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      const stranger = h.caller();
      expect(
        await h.outcome('agent_config.rollback', { agent_id: 'helper', to_revision_id: first.revision_id }, stranger),
      ).toMatchObject({ ok: false, code: 'not_found' });
      expect(await h.events(stranger.tenant, 'agent.config.reverted')).toEqual([]);
    });
  });
});

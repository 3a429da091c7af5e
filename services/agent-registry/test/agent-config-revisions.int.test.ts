import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { contentHash } from '@ars/service-kit';
import { agentRegistryService } from '../src/service.ts';

interface Revision {
  agent_id: string;
  revision_id: string;
  parent_revision_id?: string;
  content_hash: string;
  author: { tenant: string; user: string; session: string; run: string };
  tenant: string;
  created_at: string;
  message?: string;
  config: Record<string, unknown>;
}

const CONFIG = {
  llm_params: { model: 'gpt-test', temperature: 0.2 },
  prompt_layers: [{ name: 'base', text: 'Be brief.' }],
};

describe('agent_config revisions', () => {
  let storeDir: string;
  let nats: NatsServerHandle;
  let service: InProcessService;

  /** A fresh tenant per test keeps tests apart on the shared store and stream. */
  function caller(scopes: string[] = ['admin'], tenant = `t-${randomUUID()}`): VerifiedIdentity {
    return { tenant, user: 'alice', session: 's-1', scopes };
  }

  async function setRevision(identity: VerifiedIdentity, body: Record<string, unknown>): Promise<Revision> {
    const result = (await service.call('agent_config.set_revision', { identity: {}, ...body }, identity)) as {
      revision: Revision;
    };
    return result.revision;
  }

  beforeAll(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ars-agent-registry-rev-'));
    nats = await startNatsServer({ storeDir });
    service = await startInProcess(agentRegistryService, { natsUrl: nats.url });
  });

  afterAll(async () => {
    await service?.stop();
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
  });

  describe('set_revision', () => {
    it('writes the first revision without a parent, hashed and authored by the caller', async () => {
      const admin = caller();
      const revision = await setRevision(admin, { agent_id: 'helper', config: CONFIG, message: 'first' });
      expect(revision).toMatchObject({
        agent_id: 'helper',
        tenant: admin.tenant,
        content_hash: contentHash(CONFIG),
        author: { tenant: admin.tenant, user: 'alice', session: 's-1', run: '' },
        message: 'first',
        config: CONFIG,
      });
      expect(revision.parent_revision_id).toBeUndefined();
      expect(revision.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(Date.parse(revision.created_at)).not.toBeNaN();
    });

    it('chains a second revision onto the head', async () => {
      const admin = caller();
      const first = await setRevision(admin, { agent_id: 'helper', config: CONFIG });
      const second = await setRevision(admin, {
        agent_id: 'helper',
        config: {},
        parent_revision_id: first.revision_id,
      });
      expect(second.parent_revision_id).toBe(first.revision_id);
      expect(second.revision_id).not.toBe(first.revision_id);
    });

    it('publishes agent.config.revised with exactly the spec keys', async () => {
      const admin = caller();
      const first = await setRevision(admin, { agent_id: 'helper', config: CONFIG });
      const second = await setRevision(admin, { agent_id: 'helper', config: {} });
      const frames = await storedEvents(service.bus, { tenant: admin.tenant, type: 'agent.config.revised' });
      expect(frames).toHaveLength(2);
      expect(Object.keys(frames[0]!.payload).sort()).toEqual(
        ['Author', 'AgentID', 'ContentHash', 'OccurredAt', 'ParentRevisionID', 'RevisionID'].sort(),
      );
      expect(frames[0]).toMatchObject({
        type: 'agent.config.revised',
        tenant: admin.tenant,
        user: 'alice',
        session: 's-1',
        run: '',
        payload: {
          Author: { tenant: admin.tenant, user: 'alice', session: 's-1', run: '' },
          AgentID: 'helper',
          RevisionID: first.revision_id,
          ParentRevisionID: '',
          ContentHash: first.content_hash,
          OccurredAt: first.created_at,
        },
      });
      expect(frames[1]!.payload).toMatchObject({ RevisionID: second.revision_id, ParentRevisionID: first.revision_id });
    });

    it('refuses a stale parent_revision_id with conflict', async () => {
      const admin = caller();
      const first = await setRevision(admin, { agent_id: 'helper', config: CONFIG });
      await setRevision(admin, { agent_id: 'helper', config: {}, parent_revision_id: first.revision_id });
      const stale = await outcomeOf(
        setRevision(admin, { agent_id: 'helper', config: {}, parent_revision_id: first.revision_id }),
      );
      expect(stale).toMatchObject({ ok: false, code: 'conflict' });
    });

    it('refuses a parent_revision_id for an agent with no revision with conflict', async () => {
      const outcome = await outcomeOf(setRevision(caller(), { agent_id: 'new', config: {}, parent_revision_id: 'x' }));
      expect(outcome).toMatchObject({ ok: false, code: 'conflict' });
    });

    it('keeps one linear history under concurrent writers', async () => {
      const admin = caller();
      const written = await Promise.all(
        Array.from({ length: 10 }, (_, i) => setRevision(admin, { agent_id: 'busy', config: { skills: [`s${i}`] } })),
      );
      const parents = written.map((r) => r.parent_revision_id ?? null);
      expect(parents.filter((p) => p === null)).toHaveLength(1);
      expect(new Set(parents).size).toBe(10);
      const ids = new Set(written.map((r) => r.revision_id));
      expect(parents.every((p) => p === null || ids.has(p))).toBe(true);
    });
  });

  describe('get', () => {
    it('reads the head by default and a named revision on request', async () => {
      const admin = caller();
      const first = await setRevision(admin, { agent_id: 'helper', config: CONFIG });
      const second = await setRevision(admin, { agent_id: 'helper', config: { skills: ['x'] } });
      await expect(service.call('agent_config.get', { identity: {}, agent_id: 'helper' }, admin)).resolves.toEqual({
        revision: second,
      });
      await expect(
        service.call('agent_config.get', { identity: {}, agent_id: 'helper', revision_id: first.revision_id }, admin),
      ).resolves.toEqual({ revision: first });
    });

    it("answers not_found for another tenant's agent and revision", async () => {
      const owner = caller();
      const first = await setRevision(owner, { agent_id: 'secret', config: CONFIG });
      const stranger = caller();
      const head = await outcomeOf(service.call('agent_config.get', { identity: {}, agent_id: 'secret' }, stranger));
      const named = await outcomeOf(
        service.call(
          'agent_config.get',
          { identity: {}, agent_id: 'secret', revision_id: first.revision_id },
          stranger,
        ),
      );
      expect(head).toMatchObject({ ok: false, code: 'not_found' });
      expect(named).toMatchObject({ ok: false, code: 'not_found' });
    });

    it('answers not_found for an agent that never had a revision', async () => {
      const outcome = await outcomeOf(service.call('agent_config.get', { identity: {}, agent_id: 'nobody' }, caller()));
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
    });
  });

  describe('list_revisions', () => {
    it('pages newest first with the head marked', async () => {
      const admin = caller();
      const written: Revision[] = [];
      for (let i = 0; i < 5; i += 1)
        written.push(await setRevision(admin, { agent_id: 'paged', config: { skills: [`s${i}`] } }));
      const seen: { revision_id: string; head: boolean; parent_revision_id?: string }[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = (await service.call(
          'agent_config.list_revisions',
          { identity: {}, agent_id: 'paged', limit: 2, ...(cursor === undefined ? {} : { cursor }) },
          admin,
        )) as { items: typeof seen; next_cursor?: string };
        seen.push(...page.items);
        cursor = page.next_cursor;
        pages += 1;
      } while (cursor !== undefined);
      expect(pages).toBe(3);
      expect(seen.map((r) => r.revision_id)).toEqual(written.map((r) => r.revision_id).reverse());
      expect(seen.map((r) => r.head)).toEqual([true, false, false, false, false]);
      expect(seen[0]).not.toHaveProperty('config');
    });

    it("lists nothing for another tenant's agent", async () => {
      const owner = caller();
      await setRevision(owner, { agent_id: 'secret', config: CONFIG });
      await expect(
        service.call('agent_config.list_revisions', { identity: {}, agent_id: 'secret' }, caller()),
      ).resolves.toEqual({ items: [] });
    });

    it('refuses a malformed cursor with invalid_request', async () => {
      const outcome = await outcomeOf(
        service.call('agent_config.list_revisions', { identity: {}, agent_id: 'a', cursor: 'not-a-cursor' }, caller()),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('authority and bad inputs', () => {
    const calls: [string, Record<string, unknown>][] = [
      ['agent_config.set_revision', { agent_id: 'a', config: {} }],
      ['agent_config.get', { agent_id: 'a' }],
      ['agent_config.list_revisions', { agent_id: 'a' }],
    ];

    it.each(calls)('%s refuses a scopeless caller with identity_scope_required', async (method, body) => {
      const outcome = await outcomeOf(service.call(method, { identity: {}, ...body }, caller([])));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it.each(calls)('%s refuses a console:fleet caller with identity_scope_required', async (method, body) => {
      const outcome = await outcomeOf(service.call(method, { identity: {}, ...body }, caller(['console:fleet'])));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it.each(calls)(
      '%s refuses a body tenant contradicting the verified one with identity_required',
      async (method, body) => {
        const outcome = await outcomeOf(service.call(method, { identity: { tenant: 'elsewhere' }, ...body }, caller()));
        expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
      },
    );

    it.each([
      ['an unknown member', { agent_id: 'a', config: {}, extra: 1 }],
      ['a missing agent_id', { config: {} }],
      ['a missing config', { agent_id: 'a' }],
      ['an unknown config member', { agent_id: 'a', config: { temperature: 1 } }],
      ['an empty agent_id', { agent_id: '', config: {} }],
    ])('set_revision refuses %s with invalid_request', async (_what, body) => {
      const outcome = await outcomeOf(service.call('agent_config.set_revision', { identity: {}, ...body }, caller()));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('_agent.resolve', () => {
    const resolve = (identity: VerifiedIdentity, agentId: string) =>
      service.rpc.call('agent-registry', '_agent.resolve', identity, { tenant: identity.tenant, agent_id: agentId });

    it('resolves the default agent to the built-in configuration while it has no revision', async () => {
      await expect(resolve(caller([]), 'default')).resolves.toEqual({
        agent_id: 'default',
        revision_id: null,
        config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
      });
    });

    it("resolves an agent to its tenant's head revision", async () => {
      const admin = caller();
      await setRevision(admin, { agent_id: 'helper', config: {} });
      const head = await setRevision(admin, { agent_id: 'helper', config: CONFIG });
      await expect(resolve(admin, 'helper')).resolves.toEqual({
        agent_id: 'helper',
        revision_id: head.revision_id,
        config: CONFIG,
      });
    });

    it("refuses another tenant's agent exactly as an unknown one", async () => {
      const owner = caller();
      await setRevision(owner, { agent_id: 'secret', config: CONFIG });
      const foreign = await outcomeOf(resolve(caller(), 'secret'));
      const unknown = await outcomeOf(resolve(caller(), 'never-existed'));
      expect(foreign).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(unknown).toMatchObject({ ok: false, code: 'invalid_request' });
      const text = (o: typeof foreign, id: string) => (o.ok ? '' : o.message.replace(id, '<id>'));
      expect(text(foreign, 'secret')).toBe(text(unknown, 'never-existed'));
    });

    it('refuses a malformed request with invalid_request', async () => {
      const outcome = await outcomeOf(
        service.rpc.call('agent-registry', '_agent.resolve', caller(), { agent_id: 'x' }),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });
});

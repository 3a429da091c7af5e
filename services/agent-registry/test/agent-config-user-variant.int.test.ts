import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { contentHash } from '@ars/service-kit';
import { applyChanges } from './helpers/apply-changes.ts';
import { payloadKeys, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

interface Revision {
  agent_id: string;
  revision_id: string;
  parent_revision_id?: string;
  tenant: string;
  user?: string;
  content_hash: string;
  author: Record<string, string>;
  config: Record<string, unknown>;
}

const CLAIM = ['agent_config:user'];
const MINE = { llm_params: { temperature: 0.9 }, prompt_layers: [{ name: 'me', text: 'Call me Al.' }] };

describe('agent_config per-user variants', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('variants');
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A tenant with agent "helper" written by its admin, and a variant user of it. */
  async function tenantWithAgent(): Promise<{ admin: VerifiedIdentity; user: VerifiedIdentity }> {
    const admin = h.caller(['admin']);
    await h.call('agent_config.set_revision', { agent_id: 'helper', config: { llm_params: { model: 'm' } } }, admin);
    return { admin, user: { ...admin, user: 'uma', scopes: CLAIM } };
  }

  const setVariant = async (user: VerifiedIdentity, body: Record<string, unknown>) =>
    (await h.call<{ revision: Revision }>('agent_config.user.set_revision', { agent_id: 'helper', ...body }, user))
      .revision;

  it("writes the caller's variant as a revision of its own lineage", async () => {
    const { user } = await tenantWithAgent();
    const revision = await setVariant(user, { config: MINE, message: 'mine' });
    expect(revision).toMatchObject({
      agent_id: 'helper',
      tenant: user.tenant,
      user: 'uma',
      content_hash: contentHash(MINE),
      author: { tenant: user.tenant, user: 'uma', session: 's-1', run: '' },
      config: MINE,
    });
    expect(revision.parent_revision_id).toBeUndefined();
    const all = await h.events(user.tenant, 'agent.config.revised');
    expect(all.at(-1)?.payload).toMatchObject({
      RevisionID: revision.revision_id,
      AgentID: 'helper',
      ParentRevisionID: '',
    });
    expect(payloadKeys(all.at(-1))).toEqual([
      'AgentID',
      'Author',
      'ContentHash',
      'OccurredAt',
      'ParentRevisionID',
      'RevisionID',
    ]);
  });

  it('does not touch the admin revision', async () => {
    const { admin, user } = await tenantWithAgent();
    await setVariant(user, { config: MINE });
    const head = await h.call<{ revision: Revision }>('agent_config.get', { agent_id: 'helper' }, admin);
    expect(head.revision.config).toEqual({ llm_params: { model: 'm' } });
  });

  it('reads, lists, diffs and rolls back within the caller’s variant', async () => {
    const { user } = await tenantWithAgent();
    const first = await setVariant(user, { config: MINE });
    const second = await setVariant(user, { config: { skills: ['cite'] }, parent_revision_id: first.revision_id });
    await expect(h.call('agent_config.user.get', { agent_id: 'helper' }, user)).resolves.toMatchObject({
      revision: { revision_id: second.revision_id },
    });
    await expect(
      h.call('agent_config.user.get', { agent_id: 'helper', revision_id: first.revision_id }, user),
    ).resolves.toMatchObject({ revision: { revision_id: first.revision_id, config: MINE } });
    const listed = await h.call<{ items: { revision_id: string; head: boolean }[] }>(
      'agent_config.user.list_revisions',
      { agent_id: 'helper' },
      user,
    );
    expect(listed.items.map((i) => [i.revision_id, i.head])).toEqual([
      [second.revision_id, true],
      [first.revision_id, false],
    ]);
    const diff = await h.call<{ changes: never[] }>(
      'agent_config.user.diff',
      { agent_id: 'helper', from_revision_id: first.revision_id },
      user,
    );
    expect(applyChanges(MINE, diff.changes)).toEqual({ skills: ['cite'] });
    const restored = (
      await h.call<{ revision: Revision }>(
        'agent_config.user.rollback',
        { agent_id: 'helper', to_revision_id: first.revision_id },
        user,
      )
    ).revision;
    expect(restored).toMatchObject({ parent_revision_id: second.revision_id, config: MINE, user: 'uma' });
    const [reverted] = await h.events(user.tenant, 'agent.config.reverted');
    expect(payloadKeys(reverted)).toEqual(['AgentID', 'Author', 'FromRevisionID', 'OccurredAt', 'RevisionID']);
    expect(reverted?.payload).toMatchObject({ RevisionID: restored.revision_id, FromRevisionID: first.revision_id });
  });

  it("keeps users' variants apart", async () => {
    const { user } = await tenantWithAgent();
    const mine = await setVariant(user, { config: MINE });
    const other = { ...user, user: 'otto' };
    expect(await h.outcome('agent_config.user.get', { agent_id: 'helper' }, other)).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    expect(
      await h.outcome('agent_config.user.get', { agent_id: 'helper', revision_id: mine.revision_id }, other),
    ).toMatchObject({ ok: false, code: 'not_found' });
    await expect(h.call('agent_config.user.list_revisions', { agent_id: 'helper' }, other)).resolves.toEqual({
      items: [],
    });
    expect(
      await h.outcome('agent_config.user.rollback', { agent_id: 'helper', to_revision_id: mine.revision_id }, other),
    ).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses a stale parent_revision_id with conflict', async () => {
    const { user } = await tenantWithAgent();
    const first = await setVariant(user, { config: MINE });
    await setVariant(user, { config: {} });
    expect(
      await h.outcome(
        'agent_config.user.set_revision',
        { agent_id: 'helper', config: {}, parent_revision_id: first.revision_id },
        user,
      ),
    ).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('accepts a variant of the default agent without any revision', async () => {
    const user = h.caller(CLAIM);
    const revision = await setVariant(user, { agent_id: 'default', config: MINE });
    expect(revision.agent_id).toBe('default');
  });

  it("refuses a variant of an unknown agent and of another tenant's with not_found", async () => {
    const { user } = await tenantWithAgent();
    expect(await h.outcome('agent_config.user.set_revision', { agent_id: 'nobody', config: {} }, user)).toMatchObject({
      ok: false,
      code: 'not_found',
    });
    const stranger = h.caller(CLAIM);
    expect(
      await h.outcome('agent_config.user.set_revision', { agent_id: 'helper', config: {} }, stranger),
    ).toMatchObject({
      ok: false,
      code: 'not_found',
    });
  });

  it.each([
    [
      'llm_provider',
      { llm_provider: { provider_name: 'mine', provider: 'openai', base_url: 'https://evil.example.com/v1' } },
    ],
    ['mcp_connections', { mcp_connections: [{ server_id: 's', transport: 'stdio', command: 'x' }] }],
    ['oauth_providers', { oauth_providers: [{ provider_name: 'p', credential_broker: 'b' }] }],
    ['completion_hook', { completion_hook: { tool: 'shell' } }],
  ])('refuses a variant setting %s with invalid_request', async (member, config) => {
    const { user } = await tenantWithAgent();
    const outcome = await h.outcome('agent_config.user.set_revision', { agent_id: 'helper', config }, user);
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(outcome.ok ? '' : outcome.message).toContain(member);
  });

  it('refuses an unknown config member with invalid_request', async () => {
    const { user } = await tenantWithAgent();
    expect(
      await h.outcome('agent_config.user.set_revision', { agent_id: 'helper', config: { temperature: 1 } }, user),
    ).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});

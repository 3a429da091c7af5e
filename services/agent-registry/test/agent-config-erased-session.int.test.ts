import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

// The session-user tier takes part in the erasure cascade of sessions.delete
// (`_agent.erase_session`): the session's skills and settings are erased, and
// nothing is written under the session again: 410 `session_erased`, as start
// answers (issue 32, item 3).

const SKILL = { name: 'greet', content: 'Say hello.' };

describe('the session-user tier of an erased session', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('erased-session');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const erase = (who: VerifiedIdentity) =>
    h.service.rpc.call('agent-registry', '_agent.erase_session', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
    });

  it('erases the session’s skills and settings and is idempotent', async () => {
    const who = h.caller([]);
    await h.call('agent_config.session.skills.upsert', { skill: SKILL }, who);
    await h.call('agent_config.session.set_user_prompt', { prompt: 'p' }, who);
    await h.call('agent_config.session.set_source_disables', { sources: ['mcp:x'], agent_id: 'default' }, who);
    await expect(erase(who)).resolves.toEqual({ skills_deleted: 1, settings_deleted: 2 });
    await expect(erase(who)).resolves.toEqual({ skills_deleted: 0, settings_deleted: 0 });
    await expect(h.call('agent_config.session.skills.list', {}, who)).resolves.toEqual({ items: [] });
  });

  it.each([
    ['agent_config.session.skills.upsert', { skill: SKILL }],
    ['agent_config.session.skills.delete', { name: SKILL.name }],
    ['agent_config.session.set_user_prompt', { prompt: 'p' }],
    ['agent_config.session.set_source_disables', { sources: ['mcp:x'] }],
  ] as const)('refuses %s in an erased session with 410 session_erased', async (method, body) => {
    const who = h.caller([]);
    await erase(who);
    await expect(h.outcome(method, body, who)).resolves.toMatchObject({ ok: false, code: 'session_erased' });
    await expect(h.call('agent_config.session.skills.list', {}, who)).resolves.toEqual({ items: [] });
  });

  it('keeps the user tier and the other sessions of the user writable', async () => {
    const who = h.caller([]);
    await erase(who);
    await expect(h.call('agent_config.user.skills.upsert', { skill: SKILL }, who)).resolves.toMatchObject({
      skill: { name: SKILL.name },
    });
    const other = { ...who, session: 's-2' };
    await expect(h.call('agent_config.session.skills.upsert', { skill: SKILL }, other)).resolves.toMatchObject({
      skill: { name: SKILL.name },
    });
  });

  it('refuses another caller’s triple with 401 identity_required', async () => {
    const who = h.caller([]);
    const outcome = await h.service.rpc
      .call('agent-registry', '_agent.erase_session', who, { tenant: who.tenant, user: 'mallory', session: 's-1' })
      .then(
        () => ({ ok: true }),
        (error: { code?: string }) => ({ ok: false, code: error.code }),
      );
    expect(outcome).toEqual({ ok: false, code: 'identity_required' });
  });
});

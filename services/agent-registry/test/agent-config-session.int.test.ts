import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

describe('agent_config session-user settings', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('session');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const effective = (
    who: { tenant: string; user: string; session: string; scopes: readonly string[] },
    agentId = 'default',
  ) =>
    h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      agent_id: agentId,
    }) as Promise<{ config: { prompt_layers?: { name: string; text: string }[] }; source_disables: string[] }>;

  describe('set_user_prompt', () => {
    it('stores the prompt for the verified session and answers it', async () => {
      const who = h.caller([]);
      await expect(
        h.call('agent_config.session.set_user_prompt', { prompt: 'Answer in French.' }, who),
      ).resolves.toEqual({
        session_id: 's-1',
        prompt: 'Answer in French.',
        updated_at: expect.any(String),
      });
      expect((await effective(who)).config.prompt_layers).toEqual([
        { name: 'session:user_prompt', text: 'Answer in French.' },
      ]);
    });

    it('clears the prompt with an empty one', async () => {
      const who = h.caller([]);
      await h.call('agent_config.session.set_user_prompt', { prompt: 'x' }, who);
      await expect(h.call('agent_config.session.set_user_prompt', { prompt: '' }, who)).resolves.toMatchObject({
        prompt: '',
      });
      expect((await effective(who)).config.prompt_layers).toBeUndefined();
    });

    it("lets one agent's prompt win over the every-agent prompt, for that agent only", async () => {
      const who = h.caller([]);
      await h.call('agent_config.session.set_user_prompt', { prompt: 'general' }, who);
      await expect(
        h.call('agent_config.session.set_user_prompt', { prompt: 'for default', agent_id: 'default' }, who),
      ).resolves.toMatchObject({ agent_id: 'default', prompt: 'for default' });
      expect((await effective(who)).config.prompt_layers?.at(-1)?.text).toBe('for default');
      const admin = { ...who, scopes: ['admin'] };
      await h.call('agent_config.set_revision', { agent_id: 'other', config: {} }, admin);
      expect((await effective(who, 'other')).config.prompt_layers?.at(-1)?.text).toBe('general');
    });

    it('keeps sessions apart', async () => {
      const who = h.caller([]);
      await h.call('agent_config.session.set_user_prompt', { prompt: 'mine' }, who);
      expect((await effective({ ...who, session: 's-2' })).config.prompt_layers).toBeUndefined();
      expect((await effective({ ...who, user: 'bob' })).config.prompt_layers).toBeUndefined();
    });

    it('refuses a prompt longer than 16384 characters and a missing prompt with invalid_request', async () => {
      const who = h.caller([]);
      expect(
        await h.outcome('agent_config.session.set_user_prompt', { prompt: 'x'.repeat(16_385) }, who),
      ).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
      expect(await h.outcome('agent_config.session.set_user_prompt', {}, who)).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });

    it('refuses a body naming another session with identity_required', async () => {
      const who = h.caller([]);
      expect(
        await h.outcome('agent_config.session.set_user_prompt', { prompt: 'x', identity: { session: 's-9' } }, who),
      ).toMatchObject({ ok: false, code: 'identity_required' });
    });
  });

  describe('set_source_disables', () => {
    it('stores the sources deduplicated, and [] re-enables all', async () => {
      const who = h.caller([]);
      await expect(
        h.call('agent_config.session.set_source_disables', { sources: ['gh', 'builtin', 'gh'] }, who),
      ).resolves.toEqual({ session_id: 's-1', sources: ['gh', 'builtin'], updated_at: expect.any(String) });
      expect((await effective(who)).source_disables).toEqual(['gh', 'builtin']);
      await h.call('agent_config.session.set_source_disables', { sources: [] }, who);
      expect((await effective(who)).source_disables).toEqual([]);
    });

    it("lets one agent's [] re-enable what every agent has disabled", async () => {
      const who = h.caller([]);
      await h.call('agent_config.session.set_source_disables', { sources: ['gh'] }, who);
      await h.call('agent_config.session.set_source_disables', { sources: [], agent_id: 'default' }, who);
      expect((await effective(who)).source_disables).toEqual([]);
    });

    it('refuses a non-list and an empty source with invalid_request', async () => {
      const who = h.caller([]);
      expect(await h.outcome('agent_config.session.set_source_disables', { sources: 'gh' }, who)).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
      expect(await h.outcome('agent_config.session.set_source_disables', { sources: [''] }, who)).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });
});

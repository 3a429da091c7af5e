import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEERING_CONTROLS } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { newCaller, startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

/** A valid payload of each control. */
const PAYLOADS: Record<string, Record<string, unknown>> = {
  cancel: { hard: true },
  pause: { reason: 'coffee' },
  resume: {},
  approve: { token: 'p-1', reason: 'fine' },
  reject: { token: 'p-1', reason: 'no' },
  redirect: { goal: 'a new goal' },
  inject_context: { note: 'the user is in Paris' },
  user_message: { message: 'hurry up' },
  prioritize: { priority: 5 },
};
const OWNER_CONTROLS = STEERING_CONTROLS.filter((c) => c !== 'prioritize');

describe('steering controls (API side)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A started task with a live (fake) inbox; `owner` started it. */
  async function liveRun(owner = newCaller()) {
    const { task_id: taskId } = await h.start(owner);
    await h.tasks.markRunning(taskId);
    const inbox = await h.serveInbox(taskId);
    return { owner, taskId, inbox };
  }

  const control = (method: string, taskId: string, caller: VerifiedIdentity, extra: Record<string, unknown> = {}) =>
    h.call(method, { identity: { run: taskId }, payload: PAYLOADS[method], ...extra }, caller);

  describe.each(OWNER_CONTROLS)('%s', (method) => {
    it('is accepted for the owner and forwarded to the live inbox', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await expect(control(method, taskId, owner, { event_id: 'ev-1' })).resolves.toEqual({
        accepted: true,
        method,
        protocol_version: '0.1.0',
      });
      expect(inbox.received).toEqual([
        {
          method,
          payload: PAYLOADS[method],
          event_id: 'ev-1',
          caller: { tenant: owner.tenant, user: owner.user, session: owner.session, scopes: [] },
          caller_tier: 'owner_user',
        },
      ]);
      inbox.stop();
    });

    it('is accepted for the owner from another of their sessions', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await expect(control(method, taskId, { ...owner, session: 'elsewhere' })).resolves.toMatchObject({
        accepted: true,
      });
      inbox.stop();
    });

    it('refuses another user of the same tenant with scope_mismatch, whatever the body scope says', async () => {
      const { owner, taskId, inbox } = await liveRun();
      const bob = { ...owner, user: 'bob', session: 'bob-1' };
      const outcome = await outcomeOf(
        h.call(method, { identity: { run: taskId, scope: 'admin' }, payload: PAYLOADS[method] }, bob),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
      expect(inbox.received).toEqual([]);
      inbox.stop();
    });

    it("answers scope_mismatch for another tenant's run without admin, and not_found for a missing one", async () => {
      const { taskId, inbox } = await liveRun();
      for (const stranger of [newCaller(), newCaller({ scopes: ['console:fleet'] })]) {
        const foreign = await outcomeOf(control(method, taskId, stranger));
        const missing = await outcomeOf(control(method, 'no-such-task', stranger));
        expect(foreign).toMatchObject({ ok: false, code: 'scope_mismatch' });
        expect(missing).toMatchObject({ ok: false, code: 'not_found' });
      }
      expect(inbox.received).toEqual([]);
      inbox.stop();
    });

    it('is accepted for an admin of another tenant with tier admin', async () => {
      const { taskId, inbox } = await liveRun();
      await expect(control(method, taskId, newCaller({ scopes: ['admin'] }))).resolves.toMatchObject({
        accepted: true,
      });
      expect(inbox.received).toMatchObject([{ caller_tier: 'admin' }]);
      inbox.stop();
    });
  });

  describe('prioritize', () => {
    it('refuses the owner without admin with scope_mismatch', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await expect(outcomeOf(control('prioritize', taskId, owner))).resolves.toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
      expect(inbox.received).toEqual([]);
      inbox.stop();
    });

    it('is accepted for an admin of the same tenant', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await expect(control('prioritize', taskId, { ...owner, user: 'root', scopes: ['admin'] })).resolves.toMatchObject(
        {
          accepted: true,
          method: 'prioritize',
        },
      );
      expect(inbox.received).toMatchObject([{ method: 'prioritize', payload: { priority: 5 } }]);
      inbox.stop();
    });

    it('is accepted for an admin of another tenant', async () => {
      const { taskId, inbox } = await liveRun();
      await expect(control('prioritize', taskId, newCaller({ scopes: ['admin'] }))).resolves.toMatchObject({
        accepted: true,
      });
      inbox.stop();
    });
  });

  describe('a tokenless approve or reject', () => {
    function approvalOf(owner: VerifiedIdentity, taskId: string, token: string, resolved = false) {
      return {
        _id: token,
        token,
        task_id: taskId,
        tenant: owner.tenant,
        user: owner.user,
        session: owner.session,
        reason: 'tool sensitive_action requires human approval',
        kind: 'approval' as const,
        tool: 'sensitive_action',
        requested_at: new Date().toISOString(),
        ...(resolved ? { resolved_at: new Date().toISOString(), decision: 'approved' } : {}),
      };
    }

    it.each(['approve', 'reject'])(
      '%s carries the token of the approval pending when it was accepted',
      async (method) => {
        const { owner, taskId, inbox } = await liveRun();
        await h.insertPause(approvalOf(owner, taskId, `${taskId}-resolved`, true));
        await h.insertPause(approvalOf(owner, taskId, `${taskId}-open`));
        await control(method, taskId, owner, { payload: { reason: 'ok' } });
        // An explicit token is the caller's choice, and is left as it was.
        await control(method, taskId, owner, { payload: { token: 'chosen' } });
        expect(inbox.received.map((e) => (e as { payload: unknown }).payload)).toEqual([
          { reason: 'ok', token: `${taskId}-open` },
          { token: 'chosen' },
        ]);
        inbox.stop();
      },
    );

    it('goes without a token when no approval is pending (the run decides what was pending on receipt)', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await control('approve', taskId, owner, { payload: {} });
      expect(inbox.received.map((e) => (e as { payload: unknown }).payload)).toEqual([{}]);
      inbox.stop();
    });
  });

  describe('no live inbox', () => {
    it('answers not_found for a run that never started (nobody serves its inbox)', async () => {
      const owner = newCaller();
      const { task_id: taskId } = await h.start(owner);
      const outcome = await outcomeOf(control('cancel', taskId, owner));
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
      expect(outcome.ok ? '' : outcome.message).toMatch(/no live inbox/);
    });

    it.each(['complete', 'failed', 'cancelled'] as const)(
      'answers not_found for a %s run without asking its inbox',
      async (status) => {
        const { owner, taskId, inbox } = await liveRun();
        expect(await h.tasks.markTerminal(taskId, status)).toBe(true);
        const outcome = await outcomeOf(control('pause', taskId, owner));
        expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
        expect(inbox.received).toEqual([]);
        inbox.stop();
      },
    );
  });

  describe('envelope and inbox answers', () => {
    it('gives a control without event_id a fresh one and an absent payload as {}', async () => {
      const { owner, taskId, inbox } = await liveRun();
      await h.call('resume', { identity: { run: taskId } }, owner);
      const [envelope] = inbox.received as { event_id: string; payload: unknown }[];
      expect(envelope!.payload).toEqual({});
      expect(envelope!.event_id).toMatch(/^[0-9a-f-]{36}$/);
      inbox.stop();
    });

    it("relays the inbox's refusal code", async () => {
      const owner = newCaller();
      const { task_id: taskId } = await h.start(owner);
      const inbox = await h.serveInbox(taskId, { accepted: false, code: 'conflict', message: 'already paused' });
      await expect(outcomeOf(control('pause', taskId, owner))).resolves.toMatchObject({
        ok: false,
        code: 'conflict',
        message: 'already paused',
      });
      inbox.stop();
    });

    it('answers timeout when the live inbox does not acknowledge in time', async () => {
      const owner = newCaller();
      const { task_id: taskId } = await h.start(owner);
      const inbox = await h.serveInbox(taskId, null);
      await expect(outcomeOf(control('cancel', taskId, owner))).resolves.toMatchObject({ ok: false, code: 'timeout' });
      expect(inbox.received).toHaveLength(1);
      inbox.stop();
    });

    it('refuses a control without identity.run with invalid_request', async () => {
      const outcome = await outcomeOf(h.call('cancel', { identity: {} }, newCaller()));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it.each([
      ['redirect without a goal', 'redirect', {}],
      ['prioritize with a string priority', 'prioritize', { priority: 'high' }],
      ['cancel with an unknown member', 'cancel', { soft: true }],
      ['user_message without a message', 'user_message', {}],
    ])('refuses %s with invalid_request', async (_what, method, payload) => {
      const outcome = await outcomeOf(h.call(method, { identity: { run: 'x' }, payload }, newCaller()));
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });
});

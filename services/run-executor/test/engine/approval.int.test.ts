import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

describe('human approval', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({
      // `sensitive_action` asks for approval by default (no timeout); these two get a 1 s timeout here.
      TOOL_APPROVAL_POLICIES: JSON.stringify({
        side_effect: { mode: 'always', timeout_seconds: 1, on_timeout: 'reject' },
        wait: { mode: 'always', timeout_seconds: 1, on_timeout: 'approve' },
      }),
    });
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** Starts a run and waits for its approval request. */
  async function awaitingApproval(
    query: string,
    caller = newCaller(),
  ): Promise<{ taskId: string; watch: RunWatch; caller: VerifiedIdentity; token: string }> {
    const { taskId, watch } = await h.start(caller, { query });
    const requested = await watch.until((e) => e.type === 'tool.approval_requested');
    return { taskId, watch, caller, token: String(requested.payload.PauseToken) };
  }

  it('pauses before a gated tool and runs it once approved', async () => {
    const { taskId, watch, caller, token } = await awaitingApproval(
      '#script tool:sensitive_action{amount:5,note:"wire it"};finish:ok',
    );
    expect(ofType(watch.events, 'tool.approval_requested')[0]?.payload).toEqual({
      Tool: 'sensitive_action',
      PauseToken: token,
      Reason: 'tool sensitive_action requires human approval',
      Tags: ['builtin', 'hitl', 'unsafe'],
      ArgsSummary: { amount: 5, note: 'wire it' },
    });
    const pause = await watch.until((e) => e.type === 'pause.requested');
    expect(pause.payload).toEqual({ Token: token, Reason: 'tool sensitive_action requires human approval' });
    const listed = (await h.call('pause.list', {}, caller)) as { items: Record<string, unknown>[] };
    expect(listed.items).toEqual([
      expect.objectContaining({ token, task_id: taskId, kind: 'approval', tool: 'sensitive_action' }),
    ]);
    expect(ofType(watch.events, 'tool.invoked')).toEqual([]);

    await h.control('approve', taskId, caller, { reason: 'looks fine' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    const types = watch.types();
    const order = [
      'control.received',
      'control.applied',
      'tool.approved',
      'pause.resumed',
      'tool.invoked',
      'tool.completed',
    ];
    expect(order.map((t) => types.indexOf(t))).toEqual([...order.map((t) => types.indexOf(t))].sort((a, b) => a - b));
    expect(ofType(watch.events, 'tool.approved')[0]?.payload).toEqual({
      Tool: 'sensitive_action',
      PauseToken: token,
      ApproverReason: 'looks fine',
    });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toEqual({
      Token: token,
      Reason: 'looks fine',
      Decision: 'approve',
    });
    expect(((await h.call('pause.list', {}, caller)) as { items: unknown[] }).items).toEqual([]);
  });

  it('ends the run as a constraints conflict when the call is rejected', async () => {
    const { taskId, watch, caller, token } = await awaitingApproval('#script tool:sensitive_action{};finish:ok');
    await h.control('reject', taskId, caller, { reason: 'too risky' });
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'constraints_conflict' });
    expect(ofType(watch.events, 'tool.rejected')[0]?.payload).toEqual({
      Tool: 'sensitive_action',
      PauseToken: token,
      Reason: 'too risky',
    });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toMatchObject({ Token: token, Decision: 'reject' });
    expect(ofType(watch.events, 'tool.invoked')).toEqual([]);
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'failed', error_code: 'constraints_conflict' });
  });

  it('resolves one token once when several clients approve at the same time', async () => {
    const { taskId, watch, caller, token } = await awaitingApproval('#script tool:sensitive_action{};finish:ok');
    const clients = [caller, { ...caller, session: 'phone' }, { ...caller, session: 'laptop' }];
    await Promise.all(clients.map((c) => h.control('approve', taskId, c, { token })));
    await watch.terminal();
    watch.stop();
    expect(ofType(watch.events, 'control.received')).toHaveLength(3);
    expect(ofType(watch.events, 'control.applied')).toHaveLength(1);
    expect(ofType(watch.events, 'control.rejected').map((e) => e.payload.Reason)).toEqual([
      'already_resolved',
      'already_resolved',
    ]);
    expect(ofType(watch.events, 'tool.approved')).toHaveLength(1);
    expect(ofType(watch.events, 'tool.completed')).toHaveLength(1);
  });

  it('rejects a second decision on a token already resolved', async () => {
    const { taskId, watch, caller, token } = await awaitingApproval(
      '#script tool:sensitive_action{};stream:50/10;finish:ok',
    );
    await h.control('approve', taskId, caller, { token });
    await watch.until((e) => e.type === 'tool.completed');
    await h.control('reject', taskId, caller, { token });
    const rejected = await watch.until((e) => e.type === 'control.rejected');
    expect(rejected.payload).toEqual({ Type: 'reject', Reason: 'already_resolved', CallerScope: 'owner_user' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
  });

  it('refuses an approval naming another token and keeps waiting', async () => {
    const { taskId, watch, caller } = await awaitingApproval('#script tool:sensitive_action{};finish:ok');
    await h.control('approve', taskId, caller, { token: 'not-the-token' });
    const rejected = await watch.until((e) => e.type === 'control.rejected');
    expect(rejected.payload).toMatchObject({ Type: 'approve', Reason: 'no_pending_approval' });
    await h.control('approve', taskId, caller);
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
  });

  it("rejects the call when the policy's timeout passes (on_timeout reject)", async () => {
    const { taskId, watch, token } = await awaitingApproval('#script tool:side_effect{};finish:ok');
    const terminal = await watch.terminal(5_000);
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'approval_timeout' });
    expect(ofType(watch.events, 'tool.rejected')[0]?.payload).toEqual({
      Tool: 'side_effect',
      PauseToken: token,
      Reason: 'approval timed out',
    });
    expect(ofType(watch.events, 'pause.resumed')[0]?.payload).toMatchObject({ Token: token, Decision: 'reject' });
    expect(ofType(watch.events, 'tool.invoked')).toEqual([]);
  });

  it("approves the call when the policy's timeout passes (on_timeout approve)", async () => {
    const { watch, token } = await awaitingApproval('#script tool:wait{ms:10};finish:ok');
    expect((await watch.terminal(5_000)).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.approved')[0]?.payload).toEqual({
      Tool: 'wait',
      PauseToken: token,
      ApproverReason: 'approval timed out',
    });
    expect(ofType(watch.events, 'tool.completed')).toHaveLength(1);
  });

  it('resolves only the approval pending when a tokenless approve was received, never one requested later', async () => {
    const { taskId, watch, caller, token } = await awaitingApproval(
      '#script tool:sensitive_action{"amount":1};tool:sensitive_action{"amount":2};finish:done',
    );
    await Promise.all([1, 2, 3].map(() => h.control('approve', taskId, caller)));
    const narrated = () => [...ofType(watch.events, 'control.applied'), ...ofType(watch.events, 'control.rejected')];
    await watch.until(() => narrated().length === 3 && ofType(watch.events, 'tool.approval_requested').length === 2);
    const second = String(ofType(watch.events, 'tool.approval_requested')[1]?.payload.PauseToken);
    expect(ofType(watch.events, 'control.applied').map((e) => e.payload)).toEqual([
      { Type: 'approve', Outcome: 'approved', Err: '' },
    ]);
    // Received together while the first approval was pending, the two others are about that one: already resolved.
    expect(ofType(watch.events, 'control.rejected').map((e) => e.payload.Reason)).toEqual([
      'already_resolved',
      'already_resolved',
    ]);
    expect(ofType(watch.events, 'tool.approved').map((e) => e.payload.PauseToken)).toEqual([token]);
    const listed = (await h.call('pause.list', {}, caller)) as { items: { token: string }[] };
    expect(listed.items.map((item) => item.token)).toEqual([second]);
    expect(ofType(watch.events, 'tool.invoked')).toHaveLength(1);

    await h.control('approve', taskId, caller, { token: second });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'tool.approved').map((e) => e.payload.PauseToken)).toEqual([token, second]);
    expect(ofType(watch.events, 'tool.completed')).toHaveLength(2);
  });

  it('ends an approval once when an approve races its timeout: approved by the caller, or timed out', async () => {
    // Approves aimed from 8 ms before to 4 ms after each run's deadline: some land before it, some after, some in
    // between (the timeout resolved the pause, the run has not ended yet).
    const runs = await Promise.all(
      Array.from({ length: 13 }, (_, i) => i - 8).map(async (offsetMs) => {
        const caller = newCaller();
        const run = await awaitingApproval('#script tool:side_effect{};finish:ok', caller);
        const { items } = (await h.call('pause.list', {}, caller)) as {
          items: { token: string; expires_at: string }[];
        };
        const expiresAt = Date.parse(String(items.find((item) => item.token === run.token)?.expires_at));
        // Which one wins is left open; only that exactly one does is checked.
        await sleep(Math.max(0, expiresAt + offsetMs - Date.now()));
        const sent = await outcomeOf(h.control('approve', run.taskId, caller, { token: run.token, reason: 'me' }));
        return { ...run, sent, terminal: await run.watch.terminal(5_000) };
      }),
    );
    for (const { taskId, watch, token, sent, terminal } of runs) {
      // Delivered before the run ended, an approve that lost is narrated as refused; after, the inbox is gone.
      if (sent.ok) await watch.until((e) => e.type === 'control.applied' || e.type === 'control.rejected');
      watch.stop();
      const events = watch.events;
      const approved = ofType(events, 'tool.approved');
      const rejected = ofType(events, 'tool.rejected');
      expect(approved.length + rejected.length).toBe(1);
      expect(ofType(events, 'pause.resumed')).toHaveLength(1);
      const applied = ofType(events, 'control.applied');
      if (approved.length === 1) {
        expect(approved[0]?.payload).toEqual({ Tool: 'side_effect', PauseToken: token, ApproverReason: 'me' });
        expect(applied.map((e) => e.payload.Outcome)).toEqual(['approved']);
        expect(terminal.type).toBe('task.completed');
        expect(ofType(events, 'tool.completed')).toHaveLength(1);
      } else {
        expect(rejected[0]?.payload).toEqual({ Tool: 'side_effect', PauseToken: token, Reason: 'approval timed out' });
        expect(applied).toEqual([]);
        expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'approval_timeout' });
        expect(ofType(events, 'tool.invoked')).toEqual([]);
        if (sent.ok) {
          expect(ofType(events, 'control.rejected').map((e) => e.payload.Reason)).toEqual([
            expect.stringMatching(/^(already_resolved|no_pending_approval|run_ended)$/),
          ]);
        } else {
          expect(sent).toMatchObject({ ok: false, code: 'not_found' });
        }
      }
    }
  });

  it('cancels a run that waits for approval and clears its pause', async () => {
    const { taskId, watch, caller } = await awaitingApproval('#script tool:sensitive_action{};finish:ok');
    await h.control('cancel', taskId, caller);
    expect((await watch.terminal()).type).toBe('task.cancelled');
    watch.stop();
    expect(((await h.call('pause.list', {}, caller)) as { items: unknown[] }).items).toEqual([]);
  });
});

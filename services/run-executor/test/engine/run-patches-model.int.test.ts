import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newCaller } from './harness.ts';
import type { RunWatch } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * A mid-run model change against the run's governance tier, with the real
 * governance service: a model the tier lists applies at the next step
 * boundary (`task.patch_applied`, the next call made with it); one it does
 * not list is refused (`task.patch_rejected`) and the run goes on, and ends,
 * with its model. The run waits for an approval between its steps, so the
 * change lands between them; `#script inspect` reports what the provider
 * then received.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

/** The parameters the provider received in the run's last step. */
const lastParams = (events: readonly EventFrame[]) => {
  const decision = events.filter((e) => e.type === 'planner.decision').at(-1);
  return (JSON.parse(String(decision?.payload.ReasoningTrace)) as { params: Record<string, unknown> }).params;
};

describe('mid-run model changes under the governance tier', { timeout: 60_000 }, () => {
  let h: SystemHarness;
  const admin: VerifiedIdentity = { tenant: 'ops', user: 'root', session: 'console', scopes: ['admin'] };

  beforeAll(async () => {
    h = await startSystemHarness(['governance']);
    await h.call(
      'governance',
      'governance.set_posture',
      { default_tier: 'standard', tiers: [{ name: 'standard', models: ['scripted', 'scripted-large'] }] },
      admin,
    );
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** Starts a run that waits for approval after its first decision; returns it once it waits. */
  async function waitingRun(caller: VerifiedIdentity): Promise<{ taskId: string; watch: RunWatch }> {
    const started = await h.start(caller, { query: '#script tool:sensitive_action{amount:1};inspect' });
    await started.watch.until((e) => e.type === 'tool.approval_requested', 20_000);
    return started;
  }

  async function patchThenApprove(caller: VerifiedIdentity, overrides: Record<string, unknown>) {
    const { taskId, watch } = await waitingRun(caller);
    const { updated_at: patchId } = (await h.call('run-executor', 'runs.set_overrides', { overrides }, caller)) as {
      updated_at: string;
    };
    await h.call('run-executor', 'approve', { identity: { run: taskId }, payload: { reason: 'ok' } }, caller);
    const terminal = await watch.terminal(20_000);
    watch.stop();
    return { patchId, terminal, events: watch.events };
  }

  it("applies a change to a model the tier lists, from the next step's call on", async () => {
    const { patchId, terminal, events } = await patchThenApprove(newCaller(), { model: 'scripted-large' });
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, 'task.patch_applied').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(ofType(events, 'task.patch_rejected')).toEqual([]);
    expect(lastParams(events).model).toBe('scripted-large');
    expect(ofType(events, 'llm.cost.recorded').map((e) => e.payload.Model)).toEqual(['scripted', 'scripted-large']);
  });

  it('refuses a change to a model the tier does not list, and the run goes on with its model', async () => {
    const { patchId, terminal, events } = await patchThenApprove(newCaller(), {
      model: 'premium-model',
      temperature: 0.4,
    });
    // Applied, the run's next call would have been refused model_not_allowed and the run failed.
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, 'task.patch_rejected').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(ofType(events, 'task.patch_applied')).toEqual([]);
    const params = lastParams(events);
    expect(params.model).not.toBe('premium-model');
    // The patch is refused whole: its other members do not apply either.
    expect(params.temperature).toBeUndefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

/**
 * `runs.set_overrides` on the session of a live run: the change reaches the
 * run at its next step boundary (`task.patch_applied`) or is refused
 * (`task.patch_rejected`). The run waits for an approval between its steps,
 * so the change lands between them; `#script inspect` reports what the
 * provider then received.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

interface Inspected {
  system: string;
  params: Record<string, unknown>;
}

const inspectedOf = (events: readonly EventFrame[]): Inspected => {
  const decision = events.filter((e) => e.type === 'planner.decision').at(-1);
  return JSON.parse(String(decision?.payload.ReasoningTrace)) as Inspected;
};

describe('mid-run patches', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({}, { persistentStore: true });
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** Starts a run that waits for approval after its first decision; returns it once it waits. */
  async function waitingRun(caller: VerifiedIdentity): Promise<{ taskId: string; watch: RunWatch }> {
    const started = await h.start(caller, { query: '#script tool:sensitive_action{amount:1};inspect' });
    await started.watch.until((e) => e.type === 'tool.approval_requested');
    return started;
  }

  const setOverrides = async (caller: VerifiedIdentity, overrides: Record<string, unknown>) =>
    (await h.call('runs.set_overrides', { overrides }, caller)) as { updated_at: string };

  it('applies a change of parameters and instructions at the next step boundary', async () => {
    const caller = newCaller();
    const { taskId, watch } = await waitingRun(caller);
    const { updated_at: patchId } = await setOverrides(caller, {
      temperature: 0.7,
      max_tokens: 321,
      extra_instructions: 'PATCHED RULES',
    });
    await h.control('approve', taskId, caller, { reason: 'ok' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'task.patch_applied').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(ofType(watch.events, 'task.patch_rejected')).toEqual([]);
    const seen = inspectedOf(watch.events);
    expect(seen.params).toMatchObject({ temperature: 0.7, max_tokens: 321 });
    expect(seen.system).toContain('PATCHED RULES');
  });

  it('applies a model change governance admits at the next step boundary', async () => {
    const caller = newCaller();
    const { taskId, watch } = await waitingRun(caller);
    const { updated_at: patchId } = await setOverrides(caller, { model: 'another-model', temperature: 0.3 });
    await h.control('approve', taskId, caller, { reason: 'ok' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'task.patch_applied').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(ofType(watch.events, 'task.patch_rejected')).toEqual([]);
    expect(inspectedOf(watch.events).params).toMatchObject({ model: 'another-model', temperature: 0.3 });
  });

  it('refuses clearing a member mid-run', async () => {
    const caller = newCaller();
    await setOverrides(caller, { temperature: 0.2 });
    const { taskId, watch } = await waitingRun(caller);
    const { updated_at: patchId } = await setOverrides(caller, { temperature: null });
    await h.control('approve', taskId, caller, { reason: 'ok' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'task.patch_rejected').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(inspectedOf(watch.events).params).toMatchObject({ temperature: 0.2 });
  });

  it('keeps a patch applied by an earlier executor of the run, deciding it once', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:sensitive_action{amount:1};tool:echo{text:"x"};tool:sensitive_action{amount:2};inspect',
    });
    const amountOf = (e: EventFrame) => (e.payload.ArgsSummary as { amount?: number } | undefined)?.amount;
    await watch.until((e) => e.type === 'tool.approval_requested');
    const { updated_at: patchId } = await setOverrides(caller, { temperature: 0.9 });
    await h.control('approve', taskId, caller, { reason: 'ok' });
    await watch.until((e) => e.type === 'tool.approval_requested' && amountOf(e) === 2);
    await h.restart();
    // The next executor decides step 3 again and waits on the same approval.
    await watch.until(() => ofType(watch.events, 'planner.decision').length === 4, 20_000);
    await h.control('approve', taskId, caller, { reason: 'ok' });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'task.patch_applied').map((e) => e.payload)).toEqual([{ PatchID: patchId }]);
    expect(inspectedOf(watch.events).params).toMatchObject({ temperature: 0.9 });
  });

  it('publishes no patch event when the overrides did not change during the run', async () => {
    const caller = newCaller();
    const { watch } = await h.start(caller, { query: '#script tool:echo{text:"a"};finish:done' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(watch.types().filter((t) => t.startsWith('task.patch_'))).toEqual([]);
  });
});

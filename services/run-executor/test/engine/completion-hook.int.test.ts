import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * An agent's completion hook runs after the terminal event, reports itself
 * once (run.hook_dispatched or run.hook_failed) and never changes the
 * terminal event.
 */

const HOOK_TYPES = ['run.hook_dispatched', 'run.hook_failed'];
const isHook = (e: EventFrame) => HOOK_TYPES.includes(e.type);

describe('completion hook', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
    h.agentConfigs.set('hooked', { completion_hook: { tool: 'echo' } });
    h.agentConfigs.set('strict-hook', { completion_hook: { tool: 'wait' } });
    h.agentConfigs.set('missing-hook', { completion_hook: { tool: 'no_such_tool' } });
    h.agentConfigs.set('gated-hook', { completion_hook: { tool: 'sensitive_action' } });
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function runWith(agentId: string, query: string) {
    const { watch } = await h.start(newCaller(), { query, agent_id: agentId });
    const terminal = await watch.terminal();
    const hook = await watch.until(isHook);
    watch.stop();
    return { terminal, hook, events: watch.events };
  }

  it('runs the hook tool after the terminal event and reports it once with the transcript size', async () => {
    const { terminal, hook, events } = await runWith('hooked', '#script tool:echo{"n":1};finish:done');
    expect(terminal.type).toBe('task.completed');
    expect(hook.type).toBe('run.hook_dispatched');
    expect(hook.sequence).toBeGreaterThan(terminal.sequence);
    expect(Object.keys(hook.payload).sort()).toEqual(
      ['DurationMS', 'EntryCount', 'Outcome', 'Tool', 'TranscriptBytes'].sort(),
    );
    expect(hook.payload).toMatchObject({ Tool: 'echo', Outcome: 'complete' });
    expect(hook.payload.EntryCount).toBeGreaterThan(0);
    expect(hook.payload.TranscriptBytes).toBeGreaterThan(0);
    expect(events.filter(isHook)).toHaveLength(1);
  });

  it('reports a hook whose tool refuses the hook arguments as failed, leaving the run completed', async () => {
    const { terminal, hook } = await runWith('strict-hook', '#script finish:done');
    expect(terminal.type).toBe('task.completed');
    expect(hook.type).toBe('run.hook_failed');
    expect(hook.payload).toEqual({ Tool: 'wait', Outcome: 'complete', ErrorClass: 'invalid_args' });
  });

  it('reports a hook naming a tool the run does not have as failed', async () => {
    const { terminal, hook } = await runWith('missing-hook', '#script finish:done');
    expect(terminal.type).toBe('task.completed');
    expect(hook.payload).toEqual({ Tool: 'no_such_tool', Outcome: 'complete', ErrorClass: 'unknown_tool' });
  });

  it('refuses a hook whose tool needs a human approval, with nobody left to give it', async () => {
    const { terminal, hook } = await runWith('gated-hook', '#script finish:done');
    expect(terminal.type).toBe('task.completed');
    expect(hook.payload).toEqual({ Tool: 'sensitive_action', Outcome: 'complete', ErrorClass: 'approval_required' });
  });

  it('reports the run outcome of a cancelled run in its hook event', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:wait{"ms":20000};finish:x',
      agent_id: 'hooked',
    });
    await watch.until((e) => e.type === 'tool.invoked');
    await h.control('cancel', taskId, caller, { hard: true });
    const terminal = await watch.terminal();
    const hook = await watch.until(isHook);
    watch.stop();
    expect(terminal.type).toBe('task.cancelled');
    expect(hook).toMatchObject({ type: 'run.hook_dispatched', payload: { Tool: 'echo', Outcome: 'cancelled' } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { newCaller, startEngineHarness, TERMINAL_TYPES } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/** Event types with each run of consecutive `llm.completion.chunk` collapsed to one `chunks`. */
function shape(events: readonly EventFrame[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const type = e.type === 'llm.completion.chunk' ? 'chunks' : e.type;
    if (type === 'chunks' && out.at(-1) === 'chunks') continue;
    out.push(type);
  }
  return out;
}

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const terminals = (events: readonly EventFrame[]) => events.filter((e) => TERMINAL_TYPES.includes(e.type));

describe('run loop', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ RUN_MAX_STEPS: '5' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function run(query: string, extra: Record<string, unknown> = {}, caller = newCaller()) {
    const { taskId, watch } = await h.start(caller, { query, ...extra });
    const terminal = await watch.terminal();
    watch.stop();
    return { taskId, terminal, events: watch.events, caller };
  }

  it('runs a tool call whose arguments hold field names a document store refuses, once, and completes', async () => {
    const { terminal, events } = await run('#script tool:echo{"$ref":"#/a","file.name":"n.txt","":1};finish:done');
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, 'tool.invoked')).toHaveLength(1);
    expect(ofType(events, 'tool.completed')).toHaveLength(1);
  });

  it('completes a 3-step scripted run with its events in order and exactly one terminal event', async () => {
    const { taskId, events } = await run('#script tool:echo{"text":"hi"};tool:echo{n:2};finish:all done');
    const step = ['chunks', 'llm.cost.recorded', 'planner.decision', 'tool.invoked', 'tool.completed'];
    expect(shape(events)).toEqual([
      'task.spawned',
      'task.started',
      ...step,
      ...step,
      'chunks',
      'llm.cost.recorded',
      'planner.decision',
      'task.completed',
    ]);
    expect(terminals(events)).toHaveLength(1);
    expect(ofType(events, 'task.started')[0]?.payload).toEqual({ TaskID: taskId, PriorState: 'pending' });
    expect(ofType(events, 'task.completed')[0]?.payload).toEqual({ TaskID: taskId, NotifyOnComplete: false });
    expect(ofType(events, 'planner.decision').map((e) => [e.payload.DecisionKind, e.payload.Tool])).toEqual([
      ['ToolCall', 'echo'],
      ['ToolCall', 'echo'],
      ['Finish', ''],
    ]);
    const task = await h.tasks.getTask(taskId);
    expect(task).toMatchObject({ status: 'complete' });
    expect(task?.steps.map((s) => s.index)).toEqual([1, 2, 3]);
  });

  it('streams chunks with TaskID, RunID naming each provider call, the last of each call carrying Done', async () => {
    const { taskId, events } = await run('#script tool:echo{};finish:ok');
    const chunks = ofType(events, 'llm.completion.chunk');
    expect(chunks.every((c) => c.payload.TaskID === taskId)).toBe(true);
    // RunID is the call's id, `<task>:<step>:<attempt>:<claim>` (its cost's call_id): one per call.
    const runIds = [...new Set(chunks.map((c) => String(c.payload.RunID)))];
    expect(runIds).toHaveLength(2);
    expect(runIds[0]).toMatch(new RegExp(`^${taskId}:1:1:[0-9a-f]+$`));
    expect(runIds[1]).toMatch(new RegExp(`^${taskId}:2:1:[0-9a-f]+$`));
    // Two calls, two chunks each (the reasoning digest, then the tool call or the answer); no empty closing chunk.
    expect(chunks.map((c) => [c.payload.Kind, c.payload.Done])).toEqual([
      ['reasoning', false],
      ['tool_call', true],
      ['reasoning', false],
      ['text', true],
    ]);
    expect(chunks[1]?.payload.Delta).toBe('echo {}');
    expect(chunks[3]?.payload.Delta).toBe('ok');
    expect(new Set(chunks.map((c) => c.payload.Kind))).toEqual(new Set(['reasoning', 'tool_call', 'text']));
  });

  it('echoes the query in a few chunks and finishes when there is no script', async () => {
    const { events } = await run('what is the weather like?');
    const text = ofType(events, 'llm.completion.chunk')
      .map((c) => c.payload.Delta)
      .join('');
    expect(text).toBe('what is the weather like?');
    expect(shape(events)).toEqual([
      'task.spawned',
      'task.started',
      'chunks',
      'llm.cost.recorded',
      'planner.decision',
      'task.completed',
    ]);
  });

  it('records the cost of every LLM call', async () => {
    const { events } = await run('#script tool:echo{};finish:ok');
    const costs = ofType(events, 'llm.cost.recorded');
    expect(costs).toHaveLength(2);
    expect(costs[0]?.payload).toMatchObject({
      Model: 'scripted',
      Cost: { currency: 'USD', total: 0 },
      Usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
  });

  it('retries a failing idempotent tool per its policy until it succeeds', async () => {
    const { events } = await run('#script tool:fail{times:2};finish:ok');
    expect(ofType(events, 'tool.failed').map((e) => e.payload.Attempts)).toEqual([1, 2]);
    expect(ofType(events, 'tool.failed')[0]?.payload).toMatchObject({ ToolName: 'fail', ErrorClass: 'transient' });
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'fail', Attempts: 3 });
    expect(ofType(events, 'tool.policy_exhausted')).toEqual([]);
    expect(terminals(events).map((e) => e.type)).toEqual(['task.completed']);
  });

  it('reports tool.policy_exhausted when every attempt fails, and the run goes on', async () => {
    const { events } = await run('#script tool:fail{times:9,message:"boom"};finish:ok');
    expect(ofType(events, 'tool.failed')).toHaveLength(3);
    expect(ofType(events, 'tool.policy_exhausted')[0]?.payload).toMatchObject({
      ToolName: 'fail',
      Attempts: 3,
      LastClass: 'transient',
      LastError: 'boom',
    });
    expect(ofType(events, 'tool.completed')).toEqual([]);
    expect(terminals(events).map((e) => e.type)).toEqual(['task.completed']);
  });

  it('does not retry a permanent tool failure', async () => {
    const { events } = await run('#script tool:fail{times:9,class:"permanent"};finish:ok');
    expect(ofType(events, 'tool.failed').map((e) => e.payload.ErrorClass)).toEqual(['permanent']);
    expect(ofType(events, 'tool.policy_exhausted')).toEqual([]);
  });

  it('reports tool.invalid_args for arguments that fail the tool schema, and feeds the error back', async () => {
    const { events } = await run('#script tool:wait{ms:"soon"};finish:ok');
    expect(ofType(events, 'tool.invalid_args')[0]?.payload).toMatchObject({
      ToolName: 'wait',
      Transport: 'builtin',
      ValidationError: expect.stringContaining('ms'),
    });
    expect(ofType(events, 'tool.invoked')).toEqual([]);
    expect(ofType(events, 'planner.decision')[1]?.payload.ReasoningTrace).toContain('tool: error: ms');
    expect(terminals(events).map((e) => e.type)).toEqual(['task.completed']);
  });

  it('reports tool.invalid_args for a tool that does not exist', async () => {
    const { events } = await run('#script tool:teleport{};finish:ok');
    expect(ofType(events, 'tool.invalid_args')[0]?.payload).toMatchObject({
      ToolName: 'teleport',
      ValidationError: 'unknown tool: teleport',
    });
  });

  it('fails a run that exceeds the maximum number of steps', async () => {
    const { events, taskId } = await run('#script tool:echo{};loop');
    expect(ofType(events, 'planner.decision')).toHaveLength(5);
    expect(ofType(events, 'planner.max_steps_exceeded')[0]?.payload).toMatchObject({
      MaxSteps: 5,
      StepsObserved: 5,
      LastTool: 'echo',
    });
    expect(terminals(events).map((e) => [e.type, e.payload.ErrorCode])).toEqual([
      ['task.failed', 'max_steps_exceeded'],
    ]);
    expect(events.at(-1)?.type).toBe('task.failed');
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'failed', error_code: 'max_steps_exceeded' });
  });

  it('fails the run with llm_error when the provider fails (a malformed script)', async () => {
    const { events, taskId } = await run('#script tool:echo{broken');
    expect(terminals(events).map((e) => e.payload)).toEqual([{ TaskID: taskId, ErrorCode: 'llm_error' }]);
  });

  it("plays the agent configuration's script and prompt layers", async () => {
    h.agentConfigs.set('scripter', {
      prompt_layers: [{ name: 'base', text: 'You are terse.' }],
      llm_provider: {
        provider_name: 'test',
        provider: 'scripted',
        script: [{ tool: 'echo', args: { from: 'config' } }, { finish: 'configured answer' }],
      },
    });
    const { events } = await run('ignored by the script', { agent_id: 'scripter' });
    expect(ofType(events, 'planner.decision').map((e) => e.payload.Tool)).toEqual(['echo', '']);
    const text = ofType(events, 'llm.completion.chunk')
      .filter((c) => c.payload.Kind === 'text')
      .map((c) => c.payload.Delta)
      .join('');
    expect(text).toBe('configured answer');
  });

  it("puts the session's earlier turns in the prompt", async () => {
    const caller = newCaller();
    await run('first question', {}, caller);
    const { events } = await run('#script finish:second', {}, caller);
    expect(ofType(events, 'planner.decision')[0]?.payload.ReasoningTrace).toContain('history: 1 turns');
  });
});

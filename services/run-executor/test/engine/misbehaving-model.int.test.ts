import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { REPLIES, startMisbehavingOpenAi } from '../helpers/misbehaving-openai.ts';
import type { MisbehavingOpenAi, MisbehavingReply } from '../helpers/misbehaving-openai.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * A run against models that misbehave (`misbehaving-openai.ts`) and against
 * the scripted provider doing the same: invalid tool calls repaired with
 * feedback, extra members dropped, output modes downgraded, the context
 * window overflowed. Payload keys are the spec's, exactly.
 */

const KEYS: Record<string, string[]> = {
  'planner.repair_guidance_injected': ['Count', 'Counter', 'Identity', 'OccurredAt', 'Tier'],
  'llm.retry_with_feedback': ['Attempt', 'Identity', 'MaxRetries', 'Model', 'OccurredAt', 'Reason'],
  'planner.repair_exhausted': ['Attempts', 'ConsecutiveArgFailures', 'Identity', 'OccurredAt', 'Reasons'],
  'planner.action_extra_field_dropped': ['Field', 'Identity', 'OccurredAt'],
  'llm.mode_downgraded': ['From', 'FromMode', 'Identity', 'Model', 'OccurredAt', 'Reason', 'To', 'ToMode'],
  'llm.context_window_exceeded': [
    'ContextWindowReserve',
    'ContextWindowTokens',
    'EstimatedTokens',
    'Identity',
    'Model',
    'OccurredAt',
  ],
  'trajectory.compressed': ['Identity', 'OccurredAt', 'StepsAfter', 'StepsBefore', 'TokenEstimate'],
  'trajectory.compression_failed': [
    'ErrorCode',
    'ErrorMessage',
    'Identity',
    'OccurredAt',
    'StepsObserved',
    'TokenEstimate',
  ],
};

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

/** The payloads of `type`, each checked to have exactly the spec's keys. */
function payloads(events: readonly EventFrame[], type: string): Record<string, unknown>[] {
  const found = ofType(events, type).map((e) => e.payload as Record<string, unknown>);
  for (const payload of found) expect(Object.keys(payload).sort()).toEqual(KEYS[type]);
  return found;
}

describe('runs against misbehaving models', () => {
  let h: EngineHarness;
  let server: MisbehavingOpenAi;

  beforeAll(async () => {
    server = await startMisbehavingOpenAi();
    h = await startEngineHarness({ LLM_TIMEOUT_MS: '1000', RUN_MAX_STEPS: '12' });
  });

  afterAll(async () => {
    await h?.stop();
    await server?.stop();
  });

  /** Runs an agent whose openai provider plays `replies` (scenario `name`), or the scripted default with `query`. */
  async function run(name: string | undefined, replies: readonly MisbehavingReply[], query = 'go') {
    if (name !== undefined) {
      h.agentConfigs.set(name, {
        prompt_layers: [{ name: 'base', text: 'Be brief.' }],
        llm_provider: {
          provider_name: 'local',
          provider: 'openai',
          base_url: server.script(name, replies),
          model: 'test-model',
          api_key: 'k',
        },
      });
    }
    const { watch } = await h.start(newCaller(), { query, ...(name === undefined ? {} : { agent_id: name }) });
    const terminal = await watch.terminal();
    watch.stop();
    return { terminal, events: watch.events };
  }

  it('feeds malformed arguments and an unknown tool back to the model, then completes', async () => {
    const { terminal, events } = await run('repair', [
      REPLIES.toolCall('wait', '{"ms": 5'),
      REPLIES.toolCall('teleport', '{}'),
      REPLIES.toolCall('wait', '{"ms": 1}'),
      REPLIES.answer('done'),
    ]);
    expect(terminal.type).toBe('task.completed');
    expect(payloads(events, 'planner.repair_guidance_injected').map((p) => [p.Tier, p.Counter, p.Count])).toEqual([
      ['error', 'consecutive_arg_failures', 1],
      ['schema', 'consecutive_arg_failures', 2],
    ]);
    expect(payloads(events, 'llm.retry_with_feedback').map((p) => [p.Model, p.Attempt, p.MaxRetries])).toEqual([
      ['test-model', 1, 2],
      ['test-model', 2, 2],
    ]);
    expect(ofType(events, 'tool.invalid_args')).toHaveLength(2);
    const [, second, third] = server.requestsOf('repair').map((r) => r.body.messages.at(-1));
    expect(second).toMatchObject({ role: 'tool', content: expect.stringContaining('arguments are not a JSON object') });
    expect(third?.content).toContain('The tools are: ');
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'wait' });
  });

  it('gives up after PLANNER_REPAIR_MAX consecutive invalid calls and fails the run llm_error', async () => {
    const { terminal, events } = await run('exhaust', [REPLIES.toolCall('teleport', '{}')]);
    expect(payloads(events, 'planner.repair_exhausted')).toEqual([
      expect.objectContaining({
        Attempts: 3,
        ConsecutiveArgFailures: 3,
        Reasons: Array(3).fill('unknown tool: teleport'),
      }),
    ]);
    expect(payloads(events, 'planner.repair_guidance_injected')).toHaveLength(2);
    expect([terminal.type, terminal.payload.ErrorCode]).toEqual(['task.failed', 'llm_error']);
    expect(server.requestsOf('exhaust')).toHaveLength(3);
  });

  it('drops a member the tool schema forbids and runs the call, without counting a repair', async () => {
    const { terminal, events } = await run('extra', [
      REPLIES.toolCall('wait', '{"ms": 1, "hurry": true}'),
      REPLIES.answer('done'),
    ]);
    expect(terminal.type).toBe('task.completed');
    expect(payloads(events, 'planner.action_extra_field_dropped').map((p) => p.Field)).toEqual(['hurry']);
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'wait' });
    expect(ofType(events, 'planner.repair_guidance_injected')).toEqual([]);
  });

  it('repairs and drops the same way under the scripted provider', async () => {
    const { terminal, events } = await run(
      undefined,
      [],
      '#script tool:wait{ms:"soon"};tool:teleport{};tool:wait{ms:1,extra:1};finish:ok',
    );
    expect(terminal.type).toBe('task.completed');
    expect(payloads(events, 'planner.repair_guidance_injected').map((p) => p.Count)).toEqual([1, 2]);
    expect(payloads(events, 'llm.retry_with_feedback').map((p) => p.Model)).toEqual(['scripted', 'scripted']);
    expect(payloads(events, 'planner.action_extra_field_dropped').map((p) => p.Field)).toEqual(['extra']);
  });

  it('downgrades tools → json → text when the provider refuses them, and keeps the mode for the run', async () => {
    const { terminal, events } = await run('downgrade', [
      REPLIES.toolsUnsupported(),
      REPLIES.responseFormatUnsupported(),
      REPLIES.answer('Sure. {"tool": "echo", "arguments": {"text": "hi"}}'),
      REPLIES.answer('{"answer": "echoed"}'),
    ]);
    expect(terminal.type).toBe('task.completed');
    expect(payloads(events, 'llm.mode_downgraded').map((p) => [p.FromMode, p.ToMode, p.From, p.To])).toEqual([
      ['tools', 'json', 'text', 'json_object'],
      ['json', 'text', 'json_object', 'text'],
    ]);
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'echo' });
    const bodies = server.requestsOf('downgrade').map((r) => r.body);
    expect(bodies.map((b) => [b.tools !== undefined, b.response_format !== undefined])).toEqual([
      [true, false],
      [false, true],
      [false, false],
      [false, false],
    ]);
    expect(bodies[2]?.messages[0]?.content).toContain('{"tool": "<name>", "arguments": {...}}');
  });

  it('compresses the trajectory once when the provider answers context_length_exceeded, then completes', async () => {
    const long = (c: string) => JSON.stringify({ text: c.repeat(600) });
    const { terminal, events } = await run('overflow', [
      REPLIES.toolCall('echo', long('a')),
      REPLIES.toolCall('echo', long('b')),
      REPLIES.toolCall('echo', long('c')),
      REPLIES.toolCall('echo', long('d')),
      REPLIES.contextLengthExceeded(),
      REPLIES.answer('done'),
    ]);
    expect(terminal.type).toBe('task.completed');
    expect(payloads(events, 'llm.context_window_exceeded')[0]).toMatchObject({
      Model: 'test-model',
      ContextWindowTokens: 128_000,
      ContextWindowReserve: 0.2,
    });
    const [compressed] = payloads(events, 'trajectory.compressed');
    expect(compressed).toMatchObject({ StepsBefore: 4 });
    expect(compressed?.StepsAfter).toBeLessThan(4);
    const last = server.requestsOf('overflow').at(-1)?.body.messages ?? [];
    expect(
      last.some((m) => m.role === 'system' && m.content?.startsWith('Earlier steps of this run, compressed:')),
    ).toBe(true);
  });

  it('fails llm_error with trajectory.compression_failed when nothing is left to compress', async () => {
    const { terminal, events } = await run('overflow-first', [REPLIES.contextLengthExceeded()]);
    expect(payloads(events, 'trajectory.compression_failed')[0]).toMatchObject({
      StepsObserved: 0,
      ErrorCode: 'llm_error',
    });
    expect(payloads(events, 'llm.context_window_exceeded')).toHaveLength(1);
    expect([terminal.type, terminal.payload.ErrorCode]).toEqual(['task.failed', 'llm_error']);
  });

  it('fails a stream cut mid-tool-call llm_error (no failover), having streamed what came', async () => {
    const { terminal, events } = await run('cut', [REPLIES.cutToolCall('echo', '{"text":"hello"}')]);
    expect([terminal.type, terminal.payload.ErrorCode]).toEqual(['task.failed', 'llm_error']);
    expect(ofType(events, 'llm.completion.chunk').map((e) => e.payload.Kind)).toContain('tool_call');
    expect(ofType(events, 'tool.invoked')).toEqual([]);
  });

  it('waits for a slow first token within LLM_TIMEOUT_MS', async () => {
    const { terminal } = await run('slow', [REPLIES.answer('late but fine', 400)]);
    expect(terminal.type).toBe('task.completed');
  });
});

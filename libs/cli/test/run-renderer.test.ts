import { describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/client';
import { argumentSummary, createRunRenderer } from '../src/render/run-renderer.ts';
import type { RunRendererOptions } from '../src/render/run-renderer.ts';

const RUN = 'run-1';
let sequence = 0;

function frame(type: string, payload: Record<string, unknown> = {}, at = '2026-01-01T00:00:00.000Z'): EventFrame {
  sequence++;
  return { type, sequence, occurred_at: at, tenant: 't', user: 'u', session: 's', run: RUN, payload };
}

const chunk = (Kind: string, Delta: string) => frame('llm.completion.chunk', { Kind, Delta, Done: false });
const cost = (input: number, output: number, total = 0) =>
  frame('llm.cost.recorded', {
    Usage: { input_tokens: input, output_tokens: output },
    Cost: { total, currency: 'USD' },
  });

/** Renders frames with a plain, non-live renderer and returns everything written. */
function render(frames: readonly EventFrame[], options: Partial<RunRendererOptions> = {}) {
  const renderer = createRunRenderer({ color: false, live: false, ...options });
  const text = frames.map((f) => renderer.frame(f)).join('');
  return { renderer, text };
}

describe('run renderer', () => {
  it('streams text deltas as they come and ends the line before the next line', () => {
    const { text } = render([
      frame('task.spawned'),
      chunk('text', 'Hello, '),
      chunk('text', 'world.'),
      chunk('reasoning', 'hidden thoughts'),
      chunk('tool_call', 'echo {"text":"hi"}'),
      frame('planner.decision', { DecisionKind: 'ToolCall', Tool: 'echo' }),
      frame('tool.invoked', { ToolName: 'echo' }),
    ]);
    expect(text).toBe('run run-1\nHello, world.\n→ echo {"text":"hi"}\n');
  });

  it('prints a tool call with its argument summary, then its result with duration and attempts', () => {
    const { text } = render([
      chunk('tool_call', '{"path":'),
      chunk('tool_call', '"/tmp/x"}'),
      frame('tool.invoked', { ToolName: 'read' }),
      frame('tool.failed', { ToolName: 'read', Attempts: 1, ErrorMessage: 'busy' }),
      frame('tool.completed', { ToolName: 'read', Attempts: 2, DurationMS: 1500 }),
    ]);
    expect(text).toBe('→ read {"path":"/tmp/x"}\n! read attempt 1 failed: busy\n✓ read (1.5s, 2 attempts)\n');
  });

  it('prints an approval pause with its token and the commands that approve or reject it', () => {
    const { text } = render(
      [
        frame('tool.approval_requested', {
          Tool: 'deploy',
          PauseToken: 'tok-1',
          Reason: 'needs a human',
          ArgsSummary: { env: 'prod' },
        }),
        frame('pause.requested', { Token: 'tok-1', Reason: 'needs a human' }),
      ],
      { hintArgs: '--session s1' },
    );
    expect(text).toBe(
      '⏸ deploy {"env":"prod"} awaits approval: needs a human\n' +
        '  approve: ars approve tok-1 --session s1\n' +
        '  reject:  ars reject tok-1 --session s1\n',
    );
  });

  it('prints a plain pause that is not an approval, with the command that resumes it', () => {
    expect(render([frame('pause.requested', { Token: 'p', Reason: 'operator' })]).text).toBe(
      '⏸ paused: operator\n  resume: ars resume run-1\n',
    );
  });

  it('ends with status, duration, steps, tokens and cost summed over the run', () => {
    const { renderer } = render([
      frame('task.spawned', {}, '2026-01-01T00:00:00.000Z'),
      cost(100, 20, 0.001),
      frame('planner.decision', { DecisionKind: 'ToolCall' }),
      cost(50, 10, 0.0005),
      frame('planner.decision', { DecisionKind: 'Finish' }),
      chunk('text', 'done'),
      frame('task.completed', {}, '2026-01-01T00:00:02.500Z'),
    ]);
    expect(renderer.end()).toBe('\n✔ completed · 2.5s · 2 steps · 180 tokens (150 in, 30 out) · $0.0015\n');
    expect(renderer.summary()).toMatchObject({ taskId: RUN, status: 'completed', steps: 2, durationMs: 2500 });
  });

  it('names the error code of a failed run and prints its message under the final line', () => {
    const { renderer } = render([frame('task.spawned'), frame('task.failed', { ErrorCode: 'llm_error' })]);
    expect(renderer.end('the model is unreachable')).toBe(
      '✖ failed (llm_error) · 0ms · 0 steps · 0 tokens (0 in, 0 out) · $0\n  the model is unreachable\n',
    );
    expect(renderer.summary().status).toBe('failed');
  });

  it('names the reason of a cancelled run', () => {
    const { renderer } = render([frame('task.cancelled', { Reason: 'user', Cascaded: false })]);
    expect(renderer.end()).toMatch(/^■ cancelled \(user\) · /);
  });

  it('colors only when asked', () => {
    const plain = render([frame('tool.invoked', { ToolName: 'echo' })]).text;
    const colored = render([frame('tool.invoked', { ToolName: 'echo' })], { color: true }).text;
    expect(plain).not.toContain('\x1b[');
    expect(colored).toContain('\x1b[36m→\x1b[39m');
  });

  it('keeps a progress line on a terminal, erased before the next output and gone at the end', () => {
    let clock = 0;
    const renderer = createRunRenderer({ color: false, live: true, now: () => clock });
    expect(renderer.frame(frame('task.spawned'))).toBe('run run-1\n… step 1 · 0ms · 0 tokens');
    clock = 1500;
    renderer.frame(cost(10, 5));
    expect(renderer.tick()).toBe('\r\x1b[2K… step 1 · 1.5s · 15 tokens');
    expect(renderer.frame(chunk('text', 'Hi'))).toBe('\r\x1b[2KHi');
    expect(renderer.tick()).toBe('');
    expect(renderer.frame(frame('task.completed'))).toBe('');
    expect(renderer.end()).toMatch(/^\n✔ completed/);
  });

  it('ends a streamed line when following is interrupted', () => {
    const { renderer } = render([chunk('text', 'half a sen')]);
    expect(renderer.interrupt()).toBe('\n');
    expect(renderer.interrupt()).toBe('');
  });
});

describe('argumentSummary', () => {
  it('drops the tool name the scripted provider streams before the arguments', () => {
    expect(argumentSummary('echo', 'echo {"text":"hi"}')).toBe('{"text":"hi"}');
  });

  it('clips long arguments to one line of 80 characters', () => {
    const summary = argumentSummary('t', `{"text":"${'x'.repeat(200)}\n"}`);
    expect(summary).toHaveLength(80);
    expect(summary.endsWith('…')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/client';
import { formatEventLine, summarizeEvent } from '../src/render/event-summary.ts';

function frame(type: string, payload: Record<string, unknown>, run = 'run-1'): EventFrame {
  return {
    type,
    sequence: 7,
    occurred_at: '2026-01-01T08:14:57.414Z',
    tenant: 't',
    user: 'u',
    session: 's',
    run,
    payload,
  };
}

describe('events --pretty', () => {
  it('prints time, sequence, type, run and a summary on one line', () => {
    const line = formatEventLine(frame('task.failed', { TaskID: 'run-1', ErrorCode: 'llm_error' }), {
      color: false,
      utc: true,
    });
    expect(line).toBe(`08:14:57.414  #7  ${'task.failed'.padEnd(24)}  run-1  error=llm_error`);
  });

  it('summarises tool calls, costs and approvals by their members', () => {
    expect(summarizeEvent(frame('tool.completed', { ToolName: 'echo', Attempts: 1, DurationMS: 3 }))).toBe(
      'tool=echo attempts=1 ms=3',
    );
    expect(
      summarizeEvent(
        frame('llm.cost.recorded', {
          Model: 'gpt',
          Usage: { input_tokens: 10, output_tokens: 2 },
          Cost: { total: 0.5, currency: 'USD' },
        }),
      ),
    ).toBe('model=gpt tokens=10+2 cost=$0.5');
    expect(
      summarizeEvent(frame('tool.approval_requested', { Tool: 'x', PauseToken: 'tok', Reason: 'two words' })),
    ).toBe('tool=x token=tok reason="two words"');
  });

  it('quotes a chunk delta and clips it', () => {
    expect(summarizeEvent(frame('llm.completion.chunk', { Kind: 'text', Delta: 'Hello\nthere' }))).toBe(
      'text "Hello there"',
    );
  });

  it('falls back to the scalar members of an unknown type, leaving out identity and objects', () => {
    const summary = summarizeEvent(
      frame('future.thing', { Identity: { tenant: 't' }, OccurredAt: 'x', Name: 'n', Count: 2, Nested: { a: 1 } }),
    );
    expect(summary).toBe('Name=n Count=2');
  });

  it('shows a dash for an event of no run, and colors only when asked', () => {
    const line = formatEventLine(frame('session.opened', { SessionID: 's' }, ''), { color: true, utc: true });
    expect(line).toContain('\x1b[2m-\x1b[22m');
    expect(formatEventLine(frame('session.opened', {}, ''), { color: false })).not.toContain('\x1b[');
  });
});

import { describe, expect, it } from 'vitest';
import type { ToolCallRecord } from '@ars/contracts';
import { groupCalls, minuteOf } from '../../src/tools/call-metrics.repository.ts';
import { binOf } from '../../src/tools/latency-histogram.ts';

const call = (over: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  tool: 'echo',
  transport: 'builtin',
  source: 'builtin',
  outcome: 'completed',
  approval_requested: false,
  attempts: 1,
  duration_ms: 5,
  bytes_in: 10,
  bytes_out: 20,
  artifacts_offloaded: 0,
  at: '2030-01-01T10:00:30.000Z',
  ...over,
});

describe('call buckets', () => {
  it('floors a call to the start of its minute, whatever the offset', () => {
    expect(minuteOf('2030-01-01T10:00:59.999Z')).toBe(Date.parse('2030-01-01T10:00:00Z'));
    expect(minuteOf('2030-01-01T12:00:30+02:00')).toBe(Date.parse('2030-01-01T10:00:00Z'));
  });

  it('makes one delta per tool and minute', () => {
    const deltas = groupCalls([
      call(),
      call({ at: '2030-01-01T10:00:01Z' }),
      call({ at: '2030-01-01T10:01:00Z' }),
      call({ tool: 'wait' }),
    ]);
    expect(deltas.map((d) => [d.tool, new Date(d.minute).toISOString(), d.counters.invocations])).toEqual([
      ['echo', '2030-01-01T10:00:00.000Z', 2],
      ['echo', '2030-01-01T10:01:00.000Z', 1],
      ['wait', '2030-01-01T10:00:00.000Z', 1],
    ]);
  });

  it('counts failures, invalid arguments, approvals and bytes, and times only the calls that ran', () => {
    const [delta] = groupCalls([
      call({ duration_ms: 5 }),
      call({ outcome: 'failed', duration_ms: 7 }),
      call({ outcome: 'policy_exhausted', duration_ms: 7 }),
      call({ outcome: 'invalid_args', duration_ms: 0 }),
      call({ outcome: 'rejected', approval_requested: true, duration_ms: 90_000 }),
      call({ approval_requested: true, artifacts_offloaded: 2, bytes_out: 1_000 }),
    ]);
    expect(delta?.counters).toEqual({
      invocations: 6,
      failures: 2,
      invalid_args: 1,
      approvals_requested: 2,
      bytes_in: 60,
      bytes_out: 1_100,
      artifacts_offloaded: 2,
      timed: 4,
    });
    expect(delta?.latency).toEqual({ [binOf(5)]: 2, [binOf(7)]: 2 });
  });
});

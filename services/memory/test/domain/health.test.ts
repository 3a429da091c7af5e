import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/domain/health.ts';

describe('assessHealth', () => {
  it('is healthy when the store answers in time and nothing was dropped', () => {
    expect(assessHealth({ probeMs: 3.4, droppedSinceLastCheck: 0 }, 1000)).toEqual({
      health: 'healthy',
      reason: 'store answered in 3 ms',
    });
  });

  it('is unavailable when the store probe failed', () => {
    expect(assessHealth({ probeError: 'closed', probeMs: 1, droppedSinceLastCheck: 2 }, 1000)).toEqual({
      health: 'unavailable',
      reason: 'store did not answer: closed',
    });
  });

  it('is degraded when corrupt records were dropped since the last check', () => {
    expect(assessHealth({ probeMs: 1, droppedSinceLastCheck: 1 }, 1000)).toEqual({
      health: 'degraded',
      reason: 'dropped 1 corrupt memory record since the last check',
    });
  });

  it('is degraded when the store answers slower than the threshold', () => {
    expect(assessHealth({ probeMs: 1500, droppedSinceLastCheck: 0 }, 1000)).toEqual({
      health: 'degraded',
      reason: 'store answered in 1500 ms (slower than 1000 ms)',
    });
  });
});

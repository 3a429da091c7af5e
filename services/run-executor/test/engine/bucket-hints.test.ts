import { describe, expect, it } from 'vitest';
import { BucketHints, RACE_WINDOW_MS } from '../../src/engine/bucket-hints.ts';

describe('BucketHints', () => {
  it('offers every bucket at first, and once per period after that', () => {
    const hints = new BucketHints(1_000);
    hints.refresh(5_000);
    for (const bucket of ['high', 'normal', 'low'] as const) {
      const marks = hints.ready(bucket);
      expect(marks).toBeDefined();
      expect(hints.clear(bucket, marks!, 5_001)).toBe(false);
      expect(hints.ready(bucket)).toBeUndefined();
    }
    hints.refresh(5_500);
    expect(hints.ready('high')).toBeUndefined();
    hints.refresh(6_000);
    expect(hints.ready('high')).toBeDefined();
    expect(hints.ready('low')).toBeDefined();
  });

  it('offers a bucket again once something was published on it', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    expect(hints.clear('normal', hints.ready('normal')!, 10)).toBe(false);
    hints.mark('normal', 100);
    expect(hints.ready('normal')).toBeDefined();
    expect(hints.ready('high')).toBeDefined(); // never cleared
  });

  it('keeps a bucket offered when a publish arrived while its pull was under way', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    const before = hints.ready('low')!;
    hints.mark('low', 1_000); // arrives during the pull that then comes back short
    hints.clear('low', before, 1_000 + RACE_WINDOW_MS + 1);
    expect(hints.ready('low')).toBeDefined();
  });

  it('does not clear a bucket published to moments ago (the stream may not have stored it yet)', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    hints.mark('normal', 1_000);
    const marks = hints.ready('normal')!;
    expect(hints.clear('normal', marks, 1_000 + RACE_WINDOW_MS - 1)).toBe(true);
    expect(hints.ready('normal')).toBe(marks);
    expect(hints.clear('normal', marks, 1_000 + RACE_WINDOW_MS)).toBe(false);
    expect(hints.ready('normal')).toBeUndefined();
  });
});

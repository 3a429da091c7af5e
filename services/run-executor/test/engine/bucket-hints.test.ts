import { describe, expect, it } from 'vitest';
import { BucketHints } from '../../src/engine/bucket-hints.ts';

describe('BucketHints', () => {
  it('offers every bucket at first, and once per period after that', () => {
    const hints = new BucketHints(1_000);
    hints.refresh(5_000);
    for (const bucket of ['high', 'normal', 'low'] as const) {
      const marks = hints.ready(bucket);
      expect(marks).toBeDefined();
      hints.clear(bucket, marks!);
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
    hints.clear('normal', hints.ready('normal')!);
    hints.mark('normal');
    expect(hints.ready('normal')).toBeDefined();
    expect(hints.ready('high')).toBeDefined(); // never cleared
  });

  it('keeps a bucket offered when a publish arrived while its pull was under way', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    const before = hints.ready('low')!;
    hints.mark('low'); // arrives during the pull that then comes back short
    hints.clear('low', before);
    expect(hints.ready('low')).toBeDefined();
  });
});

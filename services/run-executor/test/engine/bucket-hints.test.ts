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

  it('clears at once a bucket whose every recent publish was pulled here (a lone run, one pull)', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    hints.mark('normal', 1_000, 'run-a');
    const marks = hints.ready('normal')!;
    hints.took('normal', ['run-a']);
    expect(hints.clear('normal', marks, 1_001)).toBe(false);
    expect(hints.ready('normal')).toBeUndefined();
  });

  it('asks again while a recent publish is not pulled yet, whatever else the pull brought', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    hints.mark('normal', 1_000, 'run-a');
    hints.mark('normal', 1_001, 'run-b');
    const marks = hints.ready('normal')!;
    // A redelivered run and run-a came back; run-b's publish may not be stored yet.
    hints.took('normal', ['run-old', 'run-a']);
    expect(hints.clear('normal', marks, 1_002)).toBe(true);
    hints.took('normal', ['run-b']);
    expect(hints.clear('normal', marks, 1_004)).toBe(false);
  });

  it('waits out the window of a publish without an id, or pulled by another executor', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    hints.mark('high', 1_000);
    hints.mark('high', 1_000, 'run-elsewhere');
    const marks = hints.ready('high')!;
    hints.took('high', [undefined, 'run-mine']);
    expect(hints.clear('high', marks, 1_000 + RACE_WINDOW_MS - 1)).toBe(true);
    expect(hints.clear('high', marks, 1_000 + RACE_WINDOW_MS)).toBe(false);
  });

  it('counts a repeated publish of one id from its latest sighting', () => {
    const hints = new BucketHints(60_000);
    hints.refresh(0);
    hints.mark('low', 1_000, 'run-a');
    hints.mark('low', 1_020, 'run-a'); // retried: the stream keeps one of the two
    const marks = hints.ready('low')!;
    expect(hints.clear('low', marks, 1_000 + RACE_WINDOW_MS)).toBe(true);
    hints.took('low', ['run-a']);
    expect(hints.clear('low', marks, 1_000 + RACE_WINDOW_MS + 1)).toBe(false);
  });
});

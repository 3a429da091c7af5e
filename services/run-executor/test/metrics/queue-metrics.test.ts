import { describe, expect, it } from 'vitest';
import { cachedFigures } from '../../src/metrics/queue-metrics.ts';
import type { ConsumerFigures } from '../../src/metrics/queue-metrics.ts';

describe('cached queue figures', () => {
  const figures: ConsumerFigures[] = [{ bucket: 'normal', pending: 3, ackPending: 2 }];

  it('reads the consumers once per refresh interval, however many scrapes ask', async () => {
    let reads = 0;
    let now = 0;
    const cached = cachedFigures(
      async () => {
        reads++;
        return figures;
      },
      5_000,
      () => now,
    );
    const answers = await Promise.all([cached(), cached(), cached()]);
    now = 4_999;
    await cached();
    expect(reads).toBe(1);
    expect(answers).toEqual([figures, figures, figures]);
    now = 5_000;
    await cached();
    expect(reads).toBe(2);
  });

  it('serves nothing after a failed read rather than an old figure', async () => {
    let now = 0;
    let fail = false;
    const cached = cachedFigures(
      async () => {
        if (fail) throw new Error('JetStream unavailable');
        return figures;
      },
      1_000,
      () => now,
    );
    expect(await cached()).toEqual(figures);
    fail = true;
    now = 2_000;
    expect(await cached()).toBeUndefined();
  });
});

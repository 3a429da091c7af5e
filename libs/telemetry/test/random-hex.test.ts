import { describe, expect, it } from 'vitest';
import { randomHex } from '../src/random-hex.ts';

describe('randomHex', () => {
  it('gives the asked number of bytes as lowercase hex', () => {
    for (const bytes of [1, 8, 16, 24, 4096]) expect(randomHex(bytes)).toMatch(new RegExp(`^[0-9a-f]{${2 * bytes}}$`));
  });

  it('never hands out the same bytes twice, across many refills of its pool', () => {
    // 24 bytes a draw as a span's trace and span ids: 2,000 draws refill the 4 KiB pool about a dozen times.
    const ids = Array.from({ length: 2_000 }, () => randomHex(24));
    expect(new Set(ids).size).toBe(ids.length);
    // Every byte value shows up: the pool is refilled, not read past its end or left zeroed.
    const seen = new Set(ids.join('').match(/../g));
    expect(seen.size).toBe(256);
  });

  it('draws a request larger than what is left from a fresh pool', () => {
    randomHex(4000);
    const rest = randomHex(200);
    expect(rest).toMatch(/^[0-9a-f]{400}$/);
    expect(rest).not.toMatch(/^(00)+$/);
  });
});

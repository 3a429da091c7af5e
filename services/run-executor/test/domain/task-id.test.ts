import { describe, expect, it } from 'vitest';
import { newTaskId, taskIdTime } from '../../src/domain/task-id.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newTaskId', () => {
  it('is a version 7 UUID (RFC 9562 layout, variant 10)', () => {
    for (let i = 0; i < 1_000; i += 1) expect(newTaskId()).toMatch(UUID_V7);
  });

  it('carries the instant it was made for, to the millisecond', () => {
    expect(taskIdTime(newTaskId(0))).toBe(0);
    expect(taskIdTime(newTaskId(1_795_631_011_075))).toBe(1_795_631_011_075);
    expect(newTaskId(1_795_631_011_075).slice(0, 13)).toBe('01a213f2-d503');
    // The largest 48-bit time still fits.
    expect(taskIdTime(newTaskId(2 ** 48 - 1))).toBe(2 ** 48 - 1);
  });

  it('sorts a later task after an earlier one, as strings and as store keys', () => {
    const ids = [1_000, 1_001, 65_536, 1_795_631_011_075, 1_795_631_011_076].map((ms) => newTaskId(ms));
    expect([...ids].sort()).toEqual(ids);
  });

  it('draws the rest at random: no two ids of one millisecond are alike', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newTaskId(1_795_631_011_075)));
    expect(ids.size).toBe(10_000);
  });
});

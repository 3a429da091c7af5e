import { describe, expect, it } from 'vitest';
import type { MemoryTier } from '@ars/contracts';
import { addressOf } from '../../src/domain/memory-record.ts';
import type { MemoryRecord } from '../../src/domain/memory-record.ts';
import { planCallerMemory, toBlock } from '../../src/domain/strategy.ts';

const OWNER = { tenant: 't', user: 'u', session: 's' };

function record(tier: MemoryTier, key: string, value: unknown): MemoryRecord {
  const valueJson = JSON.stringify(value);
  return {
    ...addressOf(OWNER, tier, key),
    value_json: valueJson,
    size_bytes: Buffer.byteLength(valueJson),
    version: 1,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
  };
}

describe('planCallerMemory', () => {
  it('renders string values verbatim and other values as JSON', () => {
    expect(toBlock(record('user', 'a', 'hi')).text).toBe('a: hi');
    expect(toBlock(record('user', 'b', { x: [1] })).text).toBe('b: {"x":[1]}');
  });

  it('counts block bytes in UTF-8', () => {
    expect(toBlock(record('user', 'k', 'é')).bytes).toBe(Buffer.byteLength('k: é'));
  });

  it('lists blocks tenant first, then user, then session, each by key', () => {
    const plan = planCallerMemory(
      [record('session', 'a', 1), record('user', 'b', 1), record('tenant', 'z', 1), record('tenant', 'c', 1)],
      { budgetBytes: 1000, blockMaxBytes: 1000 },
    );
    expect(plan.blocks.map((b) => `${b.tier}/${b.key}`)).toEqual(['tenant/c', 'tenant/z', 'user/b', 'session/a']);
  });

  it('keeps the most specific memory when the budget runs out', () => {
    const plan = planCallerMemory([record('tenant', 't', 'x'), record('session', 's', 'x')], {
      budgetBytes: 5,
      blockMaxBytes: 100,
    });
    expect(plan.decisions.map((d) => [d.key, d.action])).toEqual([
      ['t', 'dropped'],
      ['s', 'admitted'],
    ]);
    expect(plan.usedBytes).toBe(4);
  });

  it('drops a block over the block maximum and still admits smaller ones after it', () => {
    const plan = planCallerMemory([record('user', 'big', 'x'.repeat(20)), record('user', 'small', 'x')], {
      budgetBytes: 100,
      blockMaxBytes: 10,
    });
    expect(plan.decisions.map((d) => [d.key, d.action, d.reason])).toEqual([
      ['big', 'dropped', 'block of 25 bytes exceeds the 10-byte block maximum'],
      ['small', 'admitted', 'user tier, within the 100-byte budget'],
    ]);
  });

  it('admits nothing from no memory', () => {
    expect(planCallerMemory([], { budgetBytes: 10, blockMaxBytes: 10 })).toEqual({
      blocks: [],
      decisions: [],
      usedBytes: 0,
      budgetBytes: 10,
    });
  });
});

import { describe, expect, it } from 'vitest';
import { costRollup, costTotal } from '../../src/domain/cost.ts';

const step = (index: number, cost: number, tool?: string) => ({
  index,
  cost_usd: cost,
  tokens_in: 10 * index,
  tokens_out: index,
  recorded_at: '2030-01-01T00:00:00.000Z',
  ...(tool === undefined ? {} : { tool, model: 'm' }),
});

describe('costRollup', () => {
  it('orders steps by index and maps them to the wire shape', () => {
    expect(costRollup([step(2, 0.5, 'echo'), step(1, 0.25)])).toEqual([
      { step: 1, model: '', input_tokens: 10, output_tokens: 1, cost: 0.25, currency: 'USD' },
      { step: 2, model: 'm', input_tokens: 20, output_tokens: 2, cost: 0.5, currency: 'USD', tool: 'echo' },
    ]);
  });
});

describe('costTotal', () => {
  it('sums tokens and cost', () => {
    expect(costTotal(costRollup([step(1, 0.25), step(2, 0.5)]))).toEqual({
      input_tokens: 30,
      output_tokens: 3,
      cost: 0.75,
      currency: 'USD',
    });
  });

  it('is zero for no steps', () => {
    expect(costTotal([])).toEqual({ input_tokens: 0, output_tokens: 0, cost: 0, currency: 'USD' });
  });
});

import { describe, expect, it } from 'vitest';
import { GovernanceTier, isServiceError } from '@ars/contracts';
import { bucketCharge, capMaxTokens, checkBudget, checkModel, limitRate } from '../../src/domain/admission.ts';
import type { CallContext } from '../../src/domain/admission.ts';

const identity = { tenant: 't', user: 'u', session: 's', run: 'r' };
const occurredAt = '2025-01-02T03:04:05.000Z';

function call(tier: unknown, model = 'm'): CallContext {
  return { identity, tier: GovernanceTier.parse(tier), model, occurredAt };
}

describe('admission rules', () => {
  it('refuses a model outside the tier list as model_not_allowed', () => {
    const { refusal, event } = checkModel(call({ name: 'std', models: ['a'] }, 'b'));
    expect(event).toBeUndefined();
    expect(refusal?.code).toBe('invalid_request');
    expect(refusal?.reason).toBe('model_not_allowed');
  });

  it('lets any model through a tier without a list', () => {
    expect(checkModel(call({ name: 'std' }))).toEqual({});
  });

  it('admits below the budget ceiling', () => {
    expect(checkBudget(call({ name: 'std', budget: { ceiling: 1 } }), 0.99)).toEqual({});
  });

  it('refuses at the ceiling with a budget_exceeded event', () => {
    const { refusal, event } = checkBudget(call({ name: 'std', budget: { ceiling: 1, currency: 'EUR' } }), 1);
    expect(refusal?.code).toBe('rate_limited');
    expect(refusal?.retryable).toBe(false);
    expect(refusal?.reason).toBe('budget_exceeded');
    expect(event).toEqual({
      type: 'governance.budget_exceeded',
      payload: {
        Identity: identity,
        Tier: 'std',
        Model: 'm',
        TotalCost: 1,
        Ceiling: 1,
        Currency: 'EUR',
        OccurredAt: occurredAt,
      },
    });
  });

  it('clips above the cap by default, with an event', () => {
    const result = capMaxTokens(call({ name: 'std', max_tokens: 100 }), 250);
    expect(result).toMatchObject({ maxTokens: 100, clipped: true });
    expect(result.refusal).toBeUndefined();
    expect(result.event?.payload).toEqual({
      Identity: identity,
      Tier: 'std',
      Model: 'm',
      Requested: 250,
      Cap: 100,
      OccurredAt: occurredAt,
    });
  });

  it('refuses above the cap under the refuse policy', () => {
    const result = capMaxTokens(call({ name: 'std', max_tokens: 100, max_tokens_policy: 'refuse' }), 101);
    expect(result.refusal?.reason).toBe('max_tokens_exceeded');
    expect(result.event?.type).toBe('governance.maxtokens_exceeded');
  });

  it('leaves a request within the cap alone', () => {
    expect(capMaxTokens(call({ name: 'std', max_tokens: 100 }), 100)).toEqual({ maxTokens: 100, clipped: false });
  });

  it('charges one token per call or the admitted max tokens', () => {
    const tier = call({ name: 'std', rate_limit: { capacity: 5, refill_tokens: 1, refill_every_ms: 10 } }).tier;
    expect(bucketCharge(tier.rate_limit!, 300)).toBe(1);
    expect(bucketCharge({ ...tier.rate_limit!, unit: 'tokens' }, 300)).toBe(300);
  });

  it('reports the bucket figures with RefillEvery in nanoseconds', () => {
    const c = call({
      name: 'std',
      rate_limit: { capacity: 2, refill_tokens: 1, refill_every_ms: 250, on_limit: 'fail' },
    });
    const result = limitRate(c, c.tier.rate_limit!, { level: 0, refilled_at_ms: 0 }, 1, 0);
    expect(isServiceError(result.refusal)).toBe(true);
    expect(result.refusal?.reason).toBe('rate_limited');
    expect(result.refusal?.retryable).toBe(true);
    expect(result.event?.payload).toEqual({
      Identity: identity,
      Tier: 'std',
      Model: 'm',
      Requested: 1,
      Available: 0,
      Capacity: 2,
      RefillTokens: 1,
      RefillEvery: 250_000_000,
      OccurredAt: occurredAt,
    });
  });

  it('grants silently while the bucket holds tokens', () => {
    const c = call({ name: 'std', rate_limit: { capacity: 2, refill_tokens: 1, refill_every_ms: 250 } });
    expect(limitRate(c, c.tier.rate_limit!, undefined, 1, 0)).toEqual({
      next: { level: 1, refilled_at_ms: 0 },
      waitMs: 0,
    });
  });
});

import { describe, expect, it } from 'vitest';
import { FailoverProvider } from '@ars/contracts';
import { fromUsd, parseCurrencyRates } from '../../src/domain/currency.ts';
import { nextProvider, remainingHops } from '../../src/domain/failover.ts';
import { keyFingerprint, normaliseTokenFingerprint } from '../../src/domain/fingerprint.ts';
import { applyOverrides, splitOverrides } from '../../src/domain/overrides.ts';
import { periodStart } from '../../src/domain/periods.ts';
import { BUILTIN_POSTURE, resolveTier } from '../../src/domain/posture.ts';
import { revocationKeys } from '../../src/domain/revocation.ts';

const chain = ['a', 'b', 'c'].map((name) => FailoverProvider.parse({ name, kind: 'openai' }));

describe('failover chain', () => {
  it('moves to the provider after the failed one', () => {
    expect(nextProvider(chain, 'a', 1)?.name).toBe('b');
    expect(nextProvider(chain, 'b', 2)?.name).toBe('c');
  });

  it('starts at the chain head when the failed provider is not in it', () => {
    expect(nextProvider(chain, 'agent-own', 1)?.name).toBe('a');
  });

  it('answers none at the end of the chain or past its length', () => {
    expect(nextProvider(chain, 'c', 3)).toBeUndefined();
    expect(nextProvider(chain, 'a', 4)).toBeUndefined();
    expect(nextProvider([], 'a', 1)).toBeUndefined();
  });

  it('counts the hops left after the chosen provider', () => {
    expect(remainingHops(chain, chain[1])).toBe(1);
    expect(remainingHops(chain, undefined)).toBe(0);
  });
});

describe('periods', () => {
  const now = Date.parse('2025-03-17T15:04:05.123Z');
  it('starts days at UTC midnight, months on the first, total at the epoch', () => {
    expect(periodStart('day', now)).toBe('2025-03-17T00:00:00.000Z');
    expect(periodStart('month', now)).toBe('2025-03-01T00:00:00.000Z');
    expect(periodStart('total', now)).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('currency rates', () => {
  it('parses a list and always knows USD', () => {
    expect(parseCurrencyRates(' EUR=0.5 , GBP=0.25')).toEqual({ USD: 1, EUR: 0.5, GBP: 0.25 });
    expect(parseCurrencyRates(undefined)).toEqual({ USD: 1 });
  });

  it.each(['EUR', 'EUR=0', 'eur=1', 'EUR=1,EUR=2', 'USD=2', 'EUR=x'])('refuses %s', (text) => {
    expect(parseCurrencyRates(text)).toBeUndefined();
  });

  it('converts USD into a configured currency only', () => {
    expect(fromUsd(2, 'EUR', { USD: 1, EUR: 0.5 })).toBe(1);
    expect(fromUsd(2, 'JPY', { USD: 1 })).toBeUndefined();
  });
});

describe('overrides', () => {
  it('sets values, clears nulls and leaves absent members', () => {
    const patch = splitOverrides({ model: 'gpt', temperature: null });
    expect(patch.set).toEqual({ model: 'gpt' });
    expect(patch.clear).toEqual(['temperature']);
    expect([...patch.touched].sort()).toEqual(['model', 'temperature']);
    expect(applyOverrides({ temperature: 0.3, max_tokens: 5 }, patch)).toEqual({ model: 'gpt', max_tokens: 5 });
  });
});

describe('tiers', () => {
  it('falls back to the default tier for an unknown name', () => {
    expect(resolveTier(BUILTIN_POSTURE, 'gone')).toMatchObject({ tier: { name: 'default' }, fellBack: true });
    expect(resolveTier(BUILTIN_POSTURE, undefined)).toMatchObject({ fellBack: false });
  });
});

describe('fingerprints and revocation keys', () => {
  it('fingerprints a key as sha256 and 16 hex digits', () => {
    expect(keyFingerprint('abc')).toBe('sha256:ba7816bf8f01cfea');
  });

  it('accepts a token fingerprint with or without its prefix', () => {
    const hex = 'a'.repeat(64);
    expect(normaliseTokenFingerprint(`sha256:${hex}`)).toBe(hex);
    expect(normaliseTokenFingerprint('A'.repeat(64))).toBeUndefined();
  });

  it('keys a revoked token by fingerprint and by base64url token id', () => {
    expect(revocationKeys('f'.repeat(64), 'id/1+')).toEqual([`fp.${'f'.repeat(64)}`, 'jti.aWQvMSs']);
  });
});

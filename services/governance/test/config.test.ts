import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ars/service-kit';
import { GovernanceConfig } from '../src/config.ts';

const NATS_URL = 'nats://127.0.0.1:4222';

describe('GovernanceConfig', () => {
  it('runs in dev mode without a key-encryption key', () => {
    const config = loadConfig(GovernanceConfig, { NATS_URL });
    expect(config.ARS_AUTH_MODE).toBe('dev');
    expect(config.GOVERNANCE_KEY_ENCRYPTION_KEY).toBeUndefined();
    expect(config.GOVERNANCE_PROVIDER_HEALTH_WINDOW_SECONDS).toBe(300);
    expect(config.GOVERNANCE_COST_RECEIPT_RETENTION_HOURS).toBe(24);
    expect(config.GOVERNANCE_COST_RECEIPT_PRUNE_INTERVAL_SECONDS).toBe(600);
  });

  it('requires the key-encryption key in production', () => {
    expect(() => loadConfig(GovernanceConfig, { NATS_URL, ARS_AUTH_MODE: 'production' })).toThrowError(
      /GOVERNANCE_KEY_ENCRYPTION_KEY: is required/,
    );
  });

  it('names a key of the wrong length without echoing it', () => {
    const bad = 'c2hvcnQ=';
    let message = '';
    try {
      loadConfig(GovernanceConfig, { NATS_URL, GOVERNANCE_KEY_ENCRYPTION_KEY: bad });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/GOVERNANCE_KEY_ENCRYPTION_KEY: must be 32 bytes/);
    expect(message).not.toContain(bad);
  });

  it('names a malformed currency list', () => {
    expect(() => loadConfig(GovernanceConfig, { NATS_URL, GOVERNANCE_CURRENCY_RATES: 'EUR' })).toThrowError(
      /GOVERNANCE_CURRENCY_RATES/,
    );
  });
});

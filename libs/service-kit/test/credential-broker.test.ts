import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defineServiceConfig, loadConfig } from '../src/config.ts';
import {
  BrokerError,
  brokerUrl,
  CREDENTIAL_BROKER_CONFIG_SHAPE,
  credentialBrokerOptionsOf,
  credentialFingerprint,
} from '../src/credential-broker.ts';

/** The pure parts of the credential broker client: URL rules, fingerprints, configuration. */

const NATS_URL = 'nats://127.0.0.1:4222';
const Config = defineServiceConfig({ ...CREDENTIAL_BROKER_CONFIG_SHAPE });

function failureOf(call: () => unknown): BrokerError {
  try {
    call();
  } catch (error) {
    if (error instanceof BrokerError) return error;
    throw error;
  }
  throw new Error('no BrokerError was thrown');
}

describe('credential broker URLs', () => {
  it.each([
    'https://broker.example/credentials',
    'http://127.0.0.1:8080/c',
    'http://localhost:1/c',
    'http://[::1]:9/c',
  ])('accepts %s', (url) => {
    expect(brokerUrl(url).href).toBe(new URL(url).href);
  });

  it('refuses plain http to a host that is not loopback, as invalid_url and not retryable', () => {
    const error = failureOf(() => brokerUrl('http://broker.example/credentials'));
    expect(error).toMatchObject({ reason: 'invalid_url', broker: 'broker.example', retryable: false });
  });

  it('takes plain http to any host when insecure brokers are allowed', () => {
    expect(brokerUrl('http://broker.example/credentials', true).host).toBe('broker.example');
  });

  it.each(['ftp://broker.example/c', 'file:///etc/passwd', 'not a url'])('refuses %s', (url) => {
    expect(failureOf(() => brokerUrl(url, true)).reason).toBe('invalid_url');
  });
});

describe('credential fingerprints', () => {
  it('are the first 12 hex digits of the SHA-256 of the credential', () => {
    const expected = createHash('sha256').update('sk-secret').digest('hex').slice(0, 12);
    expect(credentialFingerprint('sk-secret')).toBe(expected);
    expect(credentialFingerprint('sk-secret')).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('credential broker configuration', () => {
  it('waits 5 s, sends no token and refuses insecure brokers unless told', () => {
    expect(credentialBrokerOptionsOf(loadConfig(Config, { NATS_URL }))).toEqual({
      token: undefined,
      timeoutMs: 5_000,
      allowInsecure: false,
    });
  });

  it('reads the token, the timeout and BROKER_ALLOW_INSECURE=true', () => {
    const config = loadConfig(Config, {
      NATS_URL,
      CREDENTIAL_BROKER_TOKEN: 'tok',
      BROKER_TIMEOUT_MS: '750',
      BROKER_ALLOW_INSECURE: 'true',
    });
    expect(credentialBrokerOptionsOf(config)).toEqual({ token: 'tok', timeoutMs: 750, allowInsecure: true });
  });

  it.each([
    ['BROKER_ALLOW_INSECURE', 'yes'],
    ['BROKER_TIMEOUT_MS', '10'],
  ])('names %s=%s as bad', (variable, value) => {
    expect(() => loadConfig(Config, { NATS_URL, [variable]: value })).toThrowError(new RegExp(variable));
  });

  it('fails a retryable reason as retryable: unreachable, timeout, 5xx, 429, 408', () => {
    const retryable = ['unreachable', 'timeout', 'http_500', 'http_503', 'http_429', 'http_408'] as const;
    for (const reason of retryable) expect(new BrokerError(reason, 'b', 'm').retryable).toBe(true);
    for (const reason of ['http_400', 'http_401', 'http_404', 'malformed', 'expired', 'invalid_url'] as const) {
      expect(new BrokerError(reason, 'b', 'm').retryable).toBe(false);
    }
  });
});

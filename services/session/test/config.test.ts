import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ars/service-kit';
import { SessionConfig } from '../src/config.ts';

const NATS_URL = 'nats://127.0.0.1:4222';

describe('SessionConfig', () => {
  it('closes idle sessions after one day unless told', () => {
    expect(loadConfig(SessionConfig, { NATS_URL }).SESSION_IDLE_CLOSE_SECONDS).toBe(86_400);
  });

  it('accepts 0 to disable idle reaping', () => {
    expect(loadConfig(SessionConfig, { NATS_URL, SESSION_IDLE_CLOSE_SECONDS: '0' }).SESSION_IDLE_CLOSE_SECONDS).toBe(0);
  });

  it('names a negative SESSION_IDLE_CLOSE_SECONDS as bad', () => {
    expect(() => loadConfig(SessionConfig, { NATS_URL, SESSION_IDLE_CLOSE_SECONDS: '-5' })).toThrowError(
      /SESSION_IDLE_CLOSE_SECONDS/,
    );
  });
});

describe('SessionConfig background jobs', () => {
  it('reaps every 60 s, retries erasures every 30 s and waits 60 s per cascade call unless told', () => {
    const config = loadConfig(SessionConfig, { NATS_URL });
    expect(config.SESSION_REAP_INTERVAL_SECONDS).toBe(60);
    expect(config.SESSION_ERASURE_RETRY_SECONDS).toBe(30);
    expect(config.SESSION_CASCADE_TIMEOUT_SECONDS).toBe(60);
  });

  it('accepts fractions of a second for the intervals', () => {
    const config = loadConfig(SessionConfig, {
      NATS_URL,
      SESSION_REAP_INTERVAL_SECONDS: '0.2',
      SESSION_ERASURE_RETRY_SECONDS: '0.5',
    });
    expect(config.SESSION_REAP_INTERVAL_SECONDS).toBe(0.2);
    expect(config.SESSION_ERASURE_RETRY_SECONDS).toBe(0.5);
  });

  it('names every bad interval', () => {
    expect(() =>
      loadConfig(SessionConfig, { NATS_URL, SESSION_REAP_INTERVAL_SECONDS: '0', SESSION_ERASURE_RETRY_SECONDS: 'x' }),
    ).toThrowError(/SESSION_REAP_INTERVAL_SECONDS[\s\S]*SESSION_ERASURE_RETRY_SECONDS/);
  });
});

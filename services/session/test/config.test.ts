import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ars/service-kit';
import { SessionConfig } from '../src/config.ts';
import { admissionReuseMs } from '../src/handlers/admit.handler.ts';

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

describe('admission reuse', () => {
  it('lets an admission be reused 10 s unless told, 0 to 300 s', () => {
    expect(loadConfig(SessionConfig, { NATS_URL }).SESSION_ADMISSION_REUSE_SECONDS).toBe(10);
    expect(
      loadConfig(SessionConfig, { NATS_URL, SESSION_ADMISSION_REUSE_SECONDS: '0' }).SESSION_ADMISSION_REUSE_SECONDS,
    ).toBe(0);
    for (const bad of ['-1', '301', 'soon']) {
      expect(() => loadConfig(SessionConfig, { NATS_URL, SESSION_ADMISSION_REUSE_SECONDS: bad })).toThrowError(
        /SESSION_ADMISSION_REUSE_SECONDS/,
      );
    }
  });

  it('keeps the reuse under a quarter of the idle-close time, so a reused session was touched too recently to be reaped', () => {
    expect(admissionReuseMs(10, 86_400)).toBe(10_000);
    expect(admissionReuseMs(10, 0)).toBe(10_000);
    expect(admissionReuseMs(10, 2)).toBe(500);
    expect(admissionReuseMs(0, 2)).toBe(0);
    expect(admissionReuseMs(0.0015, 0)).toBe(1);
  });
});

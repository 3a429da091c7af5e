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

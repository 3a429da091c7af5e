import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ars/service-kit';
import { ArtifactConfig } from '../src/config.ts';

const NATS_URL = 'nats://127.0.0.1:4222';

describe('ArtifactConfig', () => {
  it('accepts artifacts up to 64 MiB unless told', () => {
    expect(loadConfig(ArtifactConfig, { NATS_URL }).ARTIFACT_MAX_BYTES).toBe(64 * 1024 * 1024);
  });

  it('names a non-positive ARTIFACT_MAX_BYTES as bad', () => {
    expect(() => loadConfig(ArtifactConfig, { NATS_URL, ARTIFACT_MAX_BYTES: '0' })).toThrowError(/ARTIFACT_MAX_BYTES/);
  });
});

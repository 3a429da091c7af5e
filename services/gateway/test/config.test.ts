import { describe, expect, it } from 'vitest';
import { ConfigError, GatewayConfig, readGatewayConfig } from '../src/config.ts';

const NATS = { NATS_URL: 'nats://127.0.0.1:4222' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    readGatewayConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => p.variable);
    throw error;
  }
  return [];
}

describe('gateway config', () => {
  it('defaults to dev mode on 127.0.0.1:8080', () => {
    const config = readGatewayConfig(NATS);
    expect(config).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', ARS_AUTH_MODE: 'dev', LOG_LEVEL: 'info' });
  });

  it('returns a frozen config', () => {
    expect(Object.isFrozen(readGatewayConfig(NATS))).toBe(true);
  });

  it('requires NATS_URL', () => {
    expect(problemsOf({})).toContain('NATS_URL');
  });

  it('names PORT when it is not a port number', () => {
    expect(problemsOf({ ...NATS, PORT: 'eighty' })).toEqual(['PORT']);
  });

  it('creates single-replica streams unless JETSTREAM_REPLICAS says otherwise', () => {
    expect(readGatewayConfig(NATS).JETSTREAM_REPLICAS).toBe(1);
    expect(readGatewayConfig({ ...NATS, JETSTREAM_REPLICAS: '3' }).JETSTREAM_REPLICAS).toBe(3);
  });

  it.each(['0', '6', 'three'])('names JETSTREAM_REPLICAS when it is %s', (value) => {
    expect(problemsOf({ ...NATS, JETSTREAM_REPLICAS: value })).toEqual(['JETSTREAM_REPLICAS']);
  });

  it('names ARS_AUTH_MODE when it is neither dev nor production', () => {
    expect(problemsOf({ ...NATS, ARS_AUTH_MODE: 'staging' })).toEqual(['ARS_AUTH_MODE']);
  });

  it('requires issuer, audience and JWKS URL in production mode', () => {
    expect(problemsOf({ ...NATS, ARS_AUTH_MODE: 'production' }).sort()).toEqual([
      'ARS_AUTH_AUDIENCE',
      'ARS_AUTH_ISSUER',
      'ARS_AUTH_JWKS_URL',
    ]);
  });

  it('accepts a complete production configuration', () => {
    const config = readGatewayConfig({
      ...NATS,
      ARS_AUTH_MODE: 'production',
      ARS_AUTH_ISSUER: 'https://idp.example',
      ARS_AUTH_AUDIENCE: 'ars',
      ARS_AUTH_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      ARS_AUTH_ALGORITHMS: 'RS256, ES256',
    });
    expect(config.ARS_AUTH_ALGORITHMS).toEqual(['RS256', 'ES256']);
  });

  it('keeps events 7 days, unbounded in size, with a 15 s heartbeat and no idle close by default', () => {
    expect(readGatewayConfig(NATS)).toMatchObject({
      ARS_EVENTS_MAX_AGE_SECONDS: 604_800,
      ARS_EVENTS_MAX_BYTES: -1,
      ARS_EVENTS_HEARTBEAT_SECONDS: 15,
      ARS_EVENTS_IDLE_CLOSE_SECONDS: 0,
      ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES: 1_048_576,
      ARS_EVENTS_SCAN_LIMIT: 200_000,
    });
  });

  it('reads the event retention and stream limits', () => {
    const config = readGatewayConfig({
      ...NATS,
      ARS_EVENTS_MAX_AGE_SECONDS: '86400',
      ARS_EVENTS_MAX_BYTES: '1073741824',
      ARS_EVENTS_HEARTBEAT_SECONDS: '5',
      ARS_EVENTS_IDLE_CLOSE_SECONDS: '600',
    });
    expect(config).toMatchObject({
      ARS_EVENTS_MAX_AGE_SECONDS: 86_400,
      ARS_EVENTS_MAX_BYTES: 1_073_741_824,
      ARS_EVENTS_HEARTBEAT_SECONDS: 5,
      ARS_EVENTS_IDLE_CLOSE_SECONDS: 600,
    });
  });

  it('names every bad event stream variable', () => {
    expect(
      problemsOf({
        ...NATS,
        ARS_EVENTS_MAX_AGE_SECONDS: '-1',
        ARS_EVENTS_HEARTBEAT_SECONDS: '0',
        ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES: '10',
      }).sort(),
    ).toEqual(['ARS_EVENTS_HEARTBEAT_SECONDS', 'ARS_EVENTS_MAX_AGE_SECONDS', 'ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES']);
  });

  it('gives artifacts.put a 90 MiB body, search owners 5 s and rotated tokens the issuer ars-gateway by default', () => {
    expect(readGatewayConfig(NATS)).toMatchObject({
      ARS_ARTIFACT_BODY_LIMIT_BYTES: 94_371_840,
      ARS_SEARCH_SOURCE_TIMEOUT_MS: 5_000,
      ARS_ROTATION_ISSUER: 'ars-gateway',
    });
    expect(readGatewayConfig(NATS).ARS_ROTATION_SIGNING_KEY_FILE).toBeUndefined();
  });

  it('refuses a rotation issuer equal to the identity provider’s when a rotation key is set', () => {
    const production = {
      ...NATS,
      ARS_AUTH_MODE: 'production',
      ARS_AUTH_ISSUER: 'https://idp.example',
      ARS_AUTH_AUDIENCE: 'ars',
      ARS_AUTH_JWKS_URL: 'https://idp.example/jwks',
      ARS_ROTATION_SIGNING_KEY_FILE: '/etc/ars/rotation.pem',
    };
    expect(problemsOf({ ...production, ARS_ROTATION_ISSUER: 'https://idp.example' })).toEqual(['ARS_ROTATION_ISSUER']);
    expect(problemsOf(production)).toEqual([]);
  });

  it('names an artifact body limit below 1 KiB', () => {
    expect(problemsOf({ ...NATS, ARS_ARTIFACT_BODY_LIMIT_BYTES: '10' })).toEqual(['ARS_ARTIFACT_BODY_LIMIT_BYTES']);
  });

  it('refuses HS256 in ARS_AUTH_ALGORITHMS', () => {
    expect(problemsOf({ ...NATS, ARS_AUTH_ALGORITHMS: 'RS256,HS256' })).toEqual(['ARS_AUTH_ALGORITHMS']);
  });

  it('names a JWKS URL that is not http(s)', () => {
    expect(problemsOf({ ...NATS, ARS_AUTH_JWKS_URL: 'ftp://idp/jwks' })).toEqual(['ARS_AUTH_JWKS_URL']);
  });

  it('lists every bad variable at once', () => {
    expect(problemsOf({ NATS_URL: 'http://nope', PORT: '-1' }).sort()).toEqual(['NATS_URL', 'PORT']);
  });

  it('describes every variable', () => {
    for (const [name, schema] of Object.entries(GatewayConfig.shape)) {
      expect(schema.description, name).toBeTruthy();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseServiceConfig, ConfigError, defineServiceConfig, loadConfig, telemetryOptionsOf } from '../src/config.ts';

function problemsOf(run: () => unknown): Record<string, string> {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return Object.fromEntries(error.problems.map((p) => [p.variable, p.message]));
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the defaults to a minimal environment', () => {
    const config = loadConfig(BaseServiceConfig, { NATS_URL: 'nats://127.0.0.1:4222' });
    expect(config).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      DATA_DIR: '.data',
      STORE_ENGINE: 'sqlite',
      STORE_LOCKING: 'shared',
      LOG_LEVEL: 'info',
      JETSTREAM_REPLICAS: 1,
      HEALTH_HOST: '0.0.0.0',
      OTEL_METRIC_EXPORT_INTERVAL: 60_000,
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_BSP_SCHEDULE_DELAY: 5_000,
      ARS_TRACE_RPC_CLIENT_SPANS: 'errors',
    });
  });

  it('reads the standard OTEL_* trace variables and the downward API ones', () => {
    const config = loadConfig(BaseServiceConfig, {
      NATS_URL: 'nats://127.0.0.1:4222',
      OTEL_SERVICE_NAME: 'ars-memory',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=agent%20ops',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D',
      K8S_POD_NAME: 'memory-0',
    });
    expect(config).toMatchObject({
      OTEL_SERVICE_NAME: 'ars-memory',
      OTEL_RESOURCE_ATTRIBUTES: { 'deployment.environment.name': 'prod', team: 'agent ops' },
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: 0.25,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: { 'x-api-key': 'abc=' },
      K8S_POD_NAME: 'memory-0',
    });
    const { tracing, metrics } = telemetryOptionsOf(config, {
      serviceName: 'memory',
      version: '0.1.0',
      instanceId: 'memory-1',
    });
    expect(tracing).toMatchObject({
      serviceName: 'memory',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      otlpTracesEndpoint: 'http://tempo:4318/v1/traces',
      otlpProtocol: 'http/json',
      otlpHeaders: { 'x-api-key': 'abc=' },
      resource: {
        serviceNameOverride: 'ars-memory',
        serviceVersion: '0.1.0',
        instanceId: 'memory-1',
        k8s: { podName: 'memory-0' },
      },
    });
    expect(metrics.otlpHeaders).toEqual({ 'x-api-key': 'abc=' });
  });

  it('refuses an unknown sampler, a ratio above 1, an unknown protocol and malformed attributes, naming each', () => {
    const problems = problemsOf(() =>
      loadConfig(BaseServiceConfig, {
        NATS_URL: 'nats://127.0.0.1:4222',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_TRACES_SAMPLER_ARG: '1.5',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_RESOURCE_ATTRIBUTES: 'a=1,b',
        OTEL_EXPORTER_OTLP_HEADERS: 'k=%zz',
      }),
    );
    expect(Object.keys(problems).sort()).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      'OTEL_RESOURCE_ATTRIBUTES',
      'OTEL_TRACES_SAMPLER',
      'OTEL_TRACES_SAMPLER_ARG',
    ]);
    expect(problems['OTEL_RESOURCE_ATTRIBUTES']).toContain('"b" is not key=value');
  });

  it('refuses an OTLP metrics endpoint that is not an http URL and an export interval under a second', () => {
    let problems: readonly { variable: string }[] = [];
    try {
      loadConfig(BaseServiceConfig, {
        NATS_URL: 'nats://127.0.0.1:4222',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'otel:4318',
        OTEL_METRIC_EXPORT_INTERVAL: '10',
      });
    } catch (error) {
      problems = (error as { problems: readonly { variable: string }[] }).problems;
    }
    expect(problems.map((p) => p.variable).sort()).toEqual([
      'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
      'OTEL_METRIC_EXPORT_INTERVAL',
    ]);
  });

  it('returns a frozen config', () => {
    const config = loadConfig(BaseServiceConfig, { NATS_URL: 'nats://127.0.0.1:4222' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every base variable when all are valid', () => {
    const config = loadConfig(BaseServiceConfig, {
      NATS_URL: 'nats://a:4222,tls://b:4443',
      DATA_DIR: '/var/lib/ars',
      MONGO_URL: 'mongodb://db:27017',
      STORE_ENGINE: 'nedb',
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      INSTANCE_ID: 'memory-1',
    });
    expect(config).toMatchObject({
      DATA_DIR: '/var/lib/ars',
      MONGO_URL: 'mongodb://db:27017',
      STORE_ENGINE: 'nedb',
      LOG_LEVEL: 'debug',
      INSTANCE_ID: 'memory-1',
    });
  });

  it('ignores variables outside the schema', () => {
    const config = loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', HOME: '/root' });
    expect(config).not.toHaveProperty('HOME');
  });

  it('treats an empty value as unset', () => {
    const config = loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', MONGO_URL: '', DATA_DIR: '' });
    expect(config.MONGO_URL).toBeUndefined();
    expect(config.DATA_DIR).toBe('.data');
  });

  it('names every bad variable in one error', () => {
    const problems = problemsOf(() =>
      loadConfig(BaseServiceConfig, {
        MONGO_URL: 'http://db:27017',
        STORE_ENGINE: 'mysql',
        STORE_LOCKING: 'none',
        LOG_LEVEL: 'loud',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url',
      }),
    );
    expect(Object.keys(problems).sort()).toEqual([
      'LOG_LEVEL',
      'MONGO_URL',
      'NATS_URL',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'STORE_ENGINE',
      'STORE_LOCKING',
    ]);
    expect(problems['NATS_URL']).toBe('is required');
    expect(problems['STORE_ENGINE']).toMatch(/nedb.*sqlite/);
  });

  it('lists each bad variable on its own line of the message', () => {
    const run = () => loadConfig(BaseServiceConfig, { NATS_URL: 'http://n:4222', LOG_LEVEL: 'loud' });
    expect(run).toThrowError(/invalid configuration:\n {2}NATS_URL: .*\n {2}LOG_LEVEL: /);
  });

  it.each(['http://n:4222', 'nats://a:4222,', 'nats://a:4222,http://b:80', 'localhost:4222'])(
    'refuses NATS_URL %s',
    (url) => {
      expect(Object.keys(problemsOf(() => loadConfig(BaseServiceConfig, { NATS_URL: url })))).toEqual(['NATS_URL']);
    },
  );

  it.each(['nats://a:4222', 'tls://a:4443', 'nats://a:4222, nats://b:4222'])('accepts NATS_URL %s', (url) => {
    expect(loadConfig(BaseServiceConfig, { NATS_URL: url }).NATS_URL).toBe(url);
  });

  it('accepts a mongodb+srv URL', () => {
    expect(
      loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', MONGO_URL: 'mongodb+srv://c.example' }).MONGO_URL,
    ).toBe('mongodb+srv://c.example');
  });

  it('reads JETSTREAM_REPLICAS as a whole number', () => {
    expect(
      loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', JETSTREAM_REPLICAS: '3' }).JETSTREAM_REPLICAS,
    ).toBe(3);
  });

  it.each(['0', '6', 'three', '1.5'])('refuses JETSTREAM_REPLICAS %s', (value) => {
    const problems = problemsOf(() =>
      loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', JETSTREAM_REPLICAS: value }),
    );
    expect(Object.keys(problems)).toEqual(['JETSTREAM_REPLICAS']);
  });

  it('starts no probe server unless HEALTH_PORT is set', () => {
    expect(loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222' }).HEALTH_PORT).toBeUndefined();
  });

  it('reads HEALTH_PORT and HEALTH_HOST', () => {
    const config = loadConfig(BaseServiceConfig, {
      NATS_URL: 'nats://n:4222',
      HEALTH_PORT: '9090',
      HEALTH_HOST: '127.0.0.1',
    });
    expect(config).toMatchObject({ HEALTH_PORT: 9090, HEALTH_HOST: '127.0.0.1' });
  });

  it.each(['0', '65536', 'http', '80.5'])('refuses HEALTH_PORT %s', (value) => {
    const problems = problemsOf(() => loadConfig(BaseServiceConfig, { NATS_URL: 'nats://n:4222', HEALTH_PORT: value }));
    expect(Object.keys(problems)).toEqual(['HEALTH_PORT']);
  });

  it('names a bad service-specific variable beside the base ones', () => {
    const schema = defineServiceConfig({ WIDGETS: z.coerce.number().int().positive().default(8).describe('widgets') });
    expect(loadConfig(schema, { NATS_URL: 'nats://n:4222' }).WIDGETS).toBe(8);
    expect(Object.keys(problemsOf(() => loadConfig(schema, { WIDGETS: '-1' }))).sort()).toEqual([
      'NATS_URL',
      'WIDGETS',
    ]);
  });
});

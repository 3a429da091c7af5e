import { EMBEDDED_ENGINES } from '@ars/store';
import { z } from 'zod';
import { TELEMETRY_CONFIG_SHAPE } from './telemetry-config.ts';

/** The log levels a service accepts in `LOG_LEVEL` (pino's, plus `silent`). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const NATS_URL_PATTERN = /^(nats|tls):\/\/\S+$/;

function isNatsUrlList(value: string): boolean {
  return value
    .split(',')
    .map((part) => part.trim())
    .every((part) => NATS_URL_PATTERN.test(part) && URL.canParse(part));
}

function isMongoUrl(value: string): boolean {
  return /^mongodb(\+srv)?:\/\/\S+$/.test(value) && URL.canParse(value);
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/\S+$/.test(value) && URL.canParse(value);
}

/**
 * The metrics variables, shared by every service and the gateway:
 * `…Config.extend(METRICS_CONFIG_SHAPE)` or spread into an object schema.
 */
export const METRICS_CONFIG_SHAPE = {
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z
    .string()
    .refine(isHttpUrl, 'must be an http:// or https:// URL')
    .optional()
    .describe(
      'Full URL of an OTLP/HTTP metrics endpoint (e.g. http://otel:4318/v1/metrics). Unset: <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/metrics when that is set, else no OTLP metrics (GET /metrics is served either way).',
    ),
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(60_000)
    .describe('Interval of the OTLP metrics export, in ms. Default 60000.'),
} as const;

/**
 * The environment every service reads (except the gateway's own extras).
 * A service extends it with its own variables:
 * `export const MemoryConfig = BaseServiceConfig.extend({ … })`.
 */
export const BaseServiceConfig = z.object({
  NATS_URL: z
    .string()
    .refine(isNatsUrlList, 'must be a comma-separated list of nats:// or tls:// URLs')
    .describe('NATS servers to connect to: a comma-separated list of nats:// or tls:// URLs. Required.'),
  DATA_DIR: z
    .string()
    .min(1)
    .default('.data')
    .describe('Root directory of local data; the embedded store lives under DATA_DIR/<service>. Default .data.'),
  MONGO_URL: z
    .string()
    .refine(isMongoUrl, 'must be a mongodb:// or mongodb+srv:// URL')
    .optional()
    .describe(
      'MongoDB connection URL; when set the service uses database ars_<service> there instead of the embedded store.',
    ),
  STORE_ENGINE: z
    .enum(EMBEDDED_ENGINES)
    .default('sqlite')
    .describe(
      'Engine of the embedded store (ignored with MONGO_URL): sqlite (documents on disk, memory bounded, processes may share a directory) or nedb (documents in memory, one process per data directory). Default sqlite.',
    ),
  STORE_LOCKING: z
    .enum(['shared', 'exclusive'])
    .default('shared')
    .describe(
      'Embedded sqlite store only: shared (several processes may open DATA_DIR/<service>, e.g. two run-executors) or exclusive (this process alone: its transactions take no file locks, and another process opening the store is refused; the one-process mode defaults to it). Default shared.',
    ),
  LOG_LEVEL: z
    .enum(LOG_LEVELS)
    .default('info')
    .describe(`Minimum log level: one of ${LOG_LEVELS.join(', ')}. Default info.`),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .refine(isHttpUrl, 'must be an http:// or https:// URL')
    .optional()
    .describe(
      'Base URL of an OTLP/HTTP collector (e.g. http://otel:4318): traces go to /v1/traces, metrics to /v1/metrics. Unset: no OTLP export.',
    ),
  ...METRICS_CONFIG_SHAPE,
  ...TELEMETRY_CONFIG_SHAPE,
  INSTANCE_ID: z
    .string()
    .min(1)
    .optional()
    .describe('This replica\'s id in discovery, health and logs. Default: "<service>-<random>" chosen at boot.'),
  JETSTREAM_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe(
      'Replicas of the JetStream streams, KV buckets and object store the service creates (or scales) at boot: 1 on a single nats-server, 3 on a 3-node cluster; the same on every process, the gateway included. Default 1.',
    ),
  HEALTH_PORT: z.coerce
    .number()
    .int()
    .min(1)
    .max(65_535)
    .optional()
    .describe(
      'TCP port of the HTTP probe server (GET /healthz liveness, GET /readyz readiness, GET /metrics in the Prometheus text format), listening from the first moment of boot. Unset: no probe server.',
    ),
  HEALTH_HOST: z
    .string()
    .min(1)
    .default('0.0.0.0')
    .describe(
      'Interface the probe server binds (with HEALTH_PORT). Default 0.0.0.0, so that kubelet reaches it on the pod IP.',
    ),
});
export type BaseServiceConfig = z.infer<typeof BaseServiceConfig>;

/**
 * Builds a service's config schema: the base variables plus the service's own.
 * Each extra should carry `.describe()` (what, unit, default).
 */
export function defineServiceConfig<Shape extends z.ZodRawShape>(shape: Shape) {
  return BaseServiceConfig.extend(shape);
}

/** One variable that failed validation, with a human-readable reason. */
export interface ConfigProblem {
  readonly variable: string;
  readonly message: string;
}

/**
 * A configuration that failed validation. `problems` names every bad
 * variable (one entry per variable); the message lists them, one per line.
 */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(['invalid configuration:', ...problems.map((p) => `  ${p.variable}: ${p.message}`)].join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** An environment as `process.env` gives it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Reads the config from `env` once, through `schema`. An empty value counts
 * as unset (so `MONGO_URL=` falls back to the embedded store). Returns the
 * frozen result, or throws a {@link ConfigError} naming every bad variable.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: Environment): Readonly<z.output<S>> {
  const present: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') present[name] = value;
  }
  const parsed = schema.safeParse(present);
  if (parsed.success) return Object.freeze(parsed.data);

  const problems = new Map<string, string>();
  for (const issue of parsed.error.issues) {
    const variable = issue.path.length > 0 ? String(issue.path[0]) : '(environment)';
    if (problems.has(variable)) continue;
    // A refinement (custom issue) explains itself, even about a missing variable.
    problems.set(variable, present[variable] === undefined && issue.code !== 'custom' ? 'is required' : issue.message);
  }
  throw new ConfigError([...problems].map(([variable, message]) => ({ variable, message })));
}

export { TELEMETRY_CONFIG_SHAPE, telemetryOptionsOf } from './telemetry-config.ts';
export type { TelemetryConfig, TelemetryIdentity } from './telemetry-config.ts';

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  ConfigError,
  LOG_LEVELS,
  METRICS_CONFIG_SHAPE,
  TELEMETRY_CONFIG_SHAPE,
  loadConfig,
} from '@ars/service-kit/config';

/**
 * The gateway reads its environment with the same rules as every service
 * (`@ars/service-kit/config`: empty counts as unset, every bad variable
 * named) without loading the kit's store drivers, which it never uses.
 */
export { ConfigError };

/** Algorithms a connection token may be signed with (Authentication: Token). */
export const TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;
export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];

/** `dev`: ephemeral ES256 issuer and the loopback bootstrap; `production`: an external OIDC provider. */
export const AUTH_MODES = ['dev', 'production'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

const NATS_URL_PATTERN = /^(nats|tls):\/\/\S+$/;

function isNatsUrlList(value: string): boolean {
  return value.split(',').every((part) => NATS_URL_PATTERN.test(part.trim()) && URL.canParse(part.trim()));
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/\S+$/.test(value) && URL.canParse(value);
}

function isAlgorithmList(value: string): boolean {
  const items = value.split(',').map((item) => item.trim());
  return items.length > 0 && items.every((item) => (TOKEN_ALGORITHMS as readonly string[]).includes(item));
}

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The gateway's environment. Read once by `main.ts` through {@link readGatewayConfig}. */
export const GatewayConfig = z
  .object({
    PORT: integer(0, 65_535).default(8080).describe('TCP port the HTTP server listens on. Default 8080.'),
    HOST: z.string().min(1).default('127.0.0.1').describe('Interface the HTTP server binds. Default 127.0.0.1.'),
    NATS_URL: z
      .string()
      .refine(isNatsUrlList, 'must be a comma-separated list of nats:// or tls:// URLs')
      .describe('NATS servers: a comma-separated list of nats:// or tls:// URLs. Required.'),
    ARS_AUTH_MODE: z
      .enum(AUTH_MODES)
      .default('dev')
      .describe('dev (ephemeral ES256 key, SERVICE_DEV_TOKEN, loopback bootstrap) or production (OIDC). Default dev.'),
    ARS_AUTH_ISSUER: z.string().min(1).optional().describe('Expected token iss, exact match. Required in production.'),
    ARS_AUTH_AUDIENCE: z
      .string()
      .min(1)
      .optional()
      .describe('Expected token aud, exact match. Required in production.'),
    ARS_AUTH_JWKS_URL: z
      .string()
      .refine(isHttpUrl, 'must be an http:// or https:// URL')
      .optional()
      .describe("The identity provider's JWKS document (jwks_uri). Required in production."),
    ARS_AUTH_ALGORITHMS: z
      .string()
      .refine(isAlgorithmList, `must be a comma-separated subset of ${TOKEN_ALGORITHMS.join(', ')}`)
      .transform((value) => value.split(',').map((item) => item.trim() as TokenAlgorithm))
      .optional()
      .describe(
        `Allowed token algorithms (jwt_algorithms), comma-separated. Default all of ${TOKEN_ALGORITHMS.join(', ')}.`,
      ),
    ARS_DEV_TOKEN_TTL_SECONDS: integer(60, 31_536_000)
      .default(43_200)
      .describe('Lifetime of dev-mode tokens (the printed one and bootstrap ones), in seconds. Default 43200 (12 h).'),
    ARS_BODY_LIMIT_BYTES: integer(1024, 64 * 1024 * 1024)
      .default(1_048_576)
      .describe('Largest accepted request body in bytes; larger gives 413 payload_too_large. Default 1048576 (1 MiB).'),
    ARS_ARTIFACT_BODY_LIMIT_BYTES: integer(1024, 1024 * 1_048_576)
      .default(90 * 1_048_576)
      .describe(
        'Largest artifacts.put request body in bytes (the only route past ARS_BODY_LIMIT_BYTES); larger gives 413 payload_too_large. ' +
          'Default 94371840 (90 MiB): ARTIFACT_MAX_BYTES of 64 MiB as base64 JSON.',
      ),
    ARS_ROTATION_SIGNING_KEY_FILE: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Production: a private key file (PKCS#8 PEM or JWK JSON; EC P-256/384/521 or RSA ≥ 2048) the gateway signs ' +
          'auth.rotate_token tokens with. The same file on every replica. Unset: auth.rotate_token answers 501 in production.',
      ),
    ARS_ROTATION_ISSUER: z
      .string()
      .min(1)
      .default('ars-gateway')
      .describe('Production: the iss of rotated tokens; must differ from ARS_AUTH_ISSUER. Default ars-gateway.'),
    ARS_ROTATION_KEY_ID: z
      .string()
      .min(1)
      .optional()
      .describe("Production: the kid of rotated tokens. Default the key's RFC 7638 thumbprint."),
    ARS_SEARCH_SOURCE_TIMEOUT_MS: integer(100, 600_000)
      .default(5_000)
      .describe(
        'How long search.query waits for each owner before reporting it failed, in milliseconds. Default 5000.',
      ),
    ARS_RPC_TIMEOUT_MS: integer(100, 600_000)
      .default(10_000)
      .describe('How long a forwarded call waits for the owning service, in milliseconds. Default 10000.'),
    ARS_DISCOVERY_TIMEOUT_MS: integer(50, 60_000)
      .default(500)
      .describe('How long a $SRV discovery fan-in collects answers, in milliseconds. Default 500.'),
    ARS_TOPOLOGY_POLL_MS: integer(0, 3_600_000)
      .default(5_000)
      .describe(
        'How often the gateway polls $SRV.INFO to publish topology.changed (a change counts once two polls agree), in milliseconds; 0 turns it off. Default 5000.',
      ),
    ARS_CAPABILITIES_CACHE_MS: integer(0, 600_000)
      .default(2_000)
      .describe(
        'How long runtime.info reuses a discovery snapshot for its capabilities, in milliseconds. Default 2000.',
      ),
    ARS_EVENTS_MAX_AGE_SECONDS: integer(0, 10 * 365 * 86_400)
      .default(7 * 86_400)
      .describe(
        'Retention of the EVENTS stream by age, in seconds (Last-Event-ID replays this far back); 0 keeps events forever. Default 604800 (7 days).',
      ),
    ARS_EVENTS_MAX_BYTES: integer(-1, Number.MAX_SAFE_INTEGER)
      .default(-1)
      .describe('Retention of the EVENTS stream by size, in bytes; -1 means unlimited. Default -1.'),
    ARS_EVENTS_HEARTBEAT_SECONDS: integer(1, 3_600)
      .default(15)
      .describe('Interval of the `: hb` comment on a quiet event stream, in seconds. Default 15.'),
    ARS_EVENTS_IDLE_CLOSE_SECONDS: integer(0, 30 * 86_400)
      .default(0)
      .describe(
        'Close an event subscription that delivered no event for this long, with bus.subscription_idle_closed, in seconds; 0 never. Default 0.',
      ),
    ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES: integer(65_536, 256 * 1_048_576)
      .default(1_048_576)
      .describe(
        'Backlog one event subscriber may hold while its socket is backed up, in bytes; past it the subscriber gets bus.dropped and is closed. Default 1048576.',
      ),
    ARS_EVENTS_SCAN_LIMIT: integer(1_000, 10_000_000)
      .default(200_000)
      .describe('Most stored events one events.list, events.aggregate or search.events call reads. Default 200000.'),
    JETSTREAM_REPLICAS: integer(1, 5)
      .default(1)
      .describe(
        'Replicas of the JetStream streams, KV buckets and object store the gateway creates (or scales) at boot: 1 on a single nats-server, 3 on a 3-node cluster; the same on every process. Default 1.',
      ),
    ARS_DISPLAY_NAME: z.string().min(1).default('Agent Run Service').describe('runtime.info display_name.'),
    BUILD_VERSION: z
      .string()
      .min(1)
      .default('0.1.0')
      .describe('runtime.info build_version (the release). Default 0.1.0.'),
    BUILD_COMMIT: z
      .string()
      .min(1)
      .optional()
      .describe('runtime.info build_commit; unset means `git rev-parse HEAD` at boot, else "unknown".'),
    LOG_LEVEL: z
      .enum(LOG_LEVELS)
      .default('info')
      .describe(`Minimum log level: one of ${LOG_LEVELS.join(', ')}. Default info.`),
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .string()
      .refine(isHttpUrl, 'must be an http:// or https:// URL')
      .optional()
      .describe(
        'Base URL of an OTLP/HTTP collector: traces to /v1/traces, metrics to /v1/metrics; unset means no OTLP export.',
      ),
    ...METRICS_CONFIG_SHAPE,
    ...TELEMETRY_CONFIG_SHAPE,
    INSTANCE_ID: z
      .string()
      .min(1)
      .default(() => `gateway-${randomUUID().slice(0, 8)}`)
      .describe('This replica\'s id in discovery, runtime.info and logs. Default "gateway-<random>".'),
  })
  .superRefine((config, ctx) => {
    if (config.ARS_AUTH_MODE !== 'production') return;
    const required = ['ARS_AUTH_ISSUER', 'ARS_AUTH_AUDIENCE', 'ARS_AUTH_JWKS_URL'] as const;
    for (const variable of required) {
      if (config[variable] === undefined) {
        ctx.addIssue({ code: 'custom', path: [variable], message: 'is required when ARS_AUTH_MODE=production' });
      }
    }
    if (config.ARS_ROTATION_SIGNING_KEY_FILE !== undefined && config.ARS_ROTATION_ISSUER === config.ARS_AUTH_ISSUER) {
      ctx.addIssue({
        code: 'custom',
        path: ['ARS_ROTATION_ISSUER'],
        message: 'must differ from ARS_AUTH_ISSUER: rotated tokens are the gateway’s, not the identity provider’s',
      });
    }
  });
export type GatewayConfig = z.output<typeof GatewayConfig>;

/**
 * Reads the gateway's config from `env` once. Throws a {@link ConfigError}
 * whose message names every bad variable.
 */
export function readGatewayConfig(env: Readonly<Record<string, string | undefined>>): Readonly<GatewayConfig> {
  return loadConfig(GatewayConfig, env);
}

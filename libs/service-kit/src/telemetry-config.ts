import { z } from 'zod';
import { OTLP_PROTOCOLS, RPC_CLIENT_SPANS, SAMPLER_NAMES, parseKeyValueList } from '@ars/telemetry';
import type { MetricsOptions, TelemetryOptions } from '@ars/telemetry';

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/\S+$/.test(value) && URL.canParse(value);
}

/** A `key=value,…` variable, parsed (values percent-decoded); a malformed one fails the boot naming it. */
function keyValueList(what: string) {
  return z.string().transform((text, ctx) => {
    const parsed = parseKeyValueList(text);
    if ('problem' in parsed && typeof parsed.problem === 'string') {
      ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of ${what}: ${parsed.problem}` });
      return z.NEVER;
    }
    return parsed as Record<string, string>;
  });
}

/**
 * The standard OTel trace and resource variables, and the Kubernetes
 * downward-API ones the chart sets, shared by every service and the
 * gateway: spread into an object schema (as `METRICS_CONFIG_SHAPE`).
 * A bad value fails the boot naming the variable (the OTel specification
 * would ignore it with a warning; here every variable is validated alike).
 */
export const TELEMETRY_CONFIG_SHAPE = {
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .optional()
    .describe(
      'service.name of the process\'s traces and metrics. Default: the service\'s name ("agent-run-service" for ars up).',
    ),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList('key=value resource attributes')
    .optional()
    .describe(
      'Extra resource attributes, key1=value1,key2=value2 (values percent-encoded); they win over the detected ones, OTEL_SERVICE_NAME wins over service.name.',
    ),
  OTEL_TRACES_SAMPLER: z
    .enum(SAMPLER_NAMES)
    .default('parentbased_always_on')
    .describe(`The trace sampler: one of ${SAMPLER_NAMES.join(', ')}. Default parentbased_always_on.`),
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('The ratio of traceidratio and parentbased_traceidratio, 0 to 1. Default 1.'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .string()
    .refine(isHttpUrl, 'must be an http:// or https:// URL')
    .optional()
    .describe(
      'Full URL of an OTLP/HTTP traces endpoint (e.g. http://otel:4318/v1/traces), used as is. Unset: <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces when that is set, else no spans are made.',
    ),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(OTLP_PROTOCOLS)
    .optional()
    .describe(
      'Encoding of the OTLP trace export: http/protobuf or http/json. Default http/protobuf (metrics are sent as http/json).',
    ),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .enum(OTLP_PROTOCOLS)
    .optional()
    .describe('Encoding of the OTLP trace export; wins over OTEL_EXPORTER_OTLP_PROTOCOL.'),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList('key=value headers')
    .optional()
    .describe(
      'Headers of every OTLP export request (traces and metrics), key1=value1,… (values percent-encoded), e.g. an API key.',
    ),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(5_000)
    .describe('Delay between two batch exports of spans, in ms. Default 5000.'),
  ARS_TRACE_RPC_CLIENT_SPANS: z
    .enum(RPC_CLIENT_SPANS)
    .default('errors')
    .describe(
      "Which calls between services get a CLIENT span: errors (default: only a call that failed; the answering service's SERVER span is the child of the caller's span) or all.",
    ),
  K8S_POD_NAME: z
    .string()
    .min(1)
    .optional()
    .describe('k8s.pod.name of the resource (the chart sets it from the downward API).'),
  K8S_NAMESPACE_NAME: z
    .string()
    .min(1)
    .optional()
    .describe('k8s.namespace.name of the resource (the chart sets it from the downward API).'),
  K8S_NODE_NAME: z
    .string()
    .min(1)
    .optional()
    .describe('k8s.node.name of the resource (the chart sets it from the downward API).'),
} as const;

/** The variables {@link telemetryOptionsOf} reads. */
export interface TelemetryConfig {
  readonly OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?: string | undefined;
  readonly OTEL_METRIC_EXPORT_INTERVAL: number;
  readonly OTEL_SERVICE_NAME?: string | undefined;
  readonly OTEL_RESOURCE_ATTRIBUTES?: Readonly<Record<string, string>> | undefined;
  readonly OTEL_TRACES_SAMPLER: (typeof SAMPLER_NAMES)[number];
  readonly OTEL_TRACES_SAMPLER_ARG?: number | undefined;
  readonly OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_PROTOCOL?: (typeof OTLP_PROTOCOLS)[number] | undefined;
  readonly OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: (typeof OTLP_PROTOCOLS)[number] | undefined;
  readonly OTEL_EXPORTER_OTLP_HEADERS?: Readonly<Record<string, string>> | undefined;
  readonly OTEL_BSP_SCHEDULE_DELAY?: number | undefined;
  readonly ARS_TRACE_RPC_CLIENT_SPANS?: (typeof RPC_CLIENT_SPANS)[number] | undefined;
  readonly K8S_POD_NAME?: string | undefined;
  readonly K8S_NAMESPACE_NAME?: string | undefined;
  readonly K8S_NODE_NAME?: string | undefined;
}

/** Who the process is: the default `service.name`, `service.version` and `service.instance.id`. */
export interface TelemetryIdentity {
  readonly serviceName: string;
  readonly version: string;
  readonly instanceId: string;
}

function definedOnly<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The options of `initTelemetry` and `initMetrics` a config gives, for the
 * service `identity` names; both share one resource.
 */
export function telemetryOptionsOf(
  config: TelemetryConfig,
  identity: TelemetryIdentity,
): { readonly tracing: TelemetryOptions; readonly metrics: MetricsOptions } {
  const resource = definedOnly({
    serviceNameOverride: config.OTEL_SERVICE_NAME,
    serviceVersion: identity.version,
    instanceId: identity.instanceId,
    attributes: config.OTEL_RESOURCE_ATTRIBUTES,
    k8s: definedOnly({
      podName: config.K8S_POD_NAME,
      namespaceName: config.K8S_NAMESPACE_NAME,
      nodeName: config.K8S_NODE_NAME,
    }),
  });
  const tracing: TelemetryOptions = definedOnly({
    serviceName: identity.serviceName,
    resource,
    sampler: definedOnly({ name: config.OTEL_TRACES_SAMPLER, ratio: config.OTEL_TRACES_SAMPLER_ARG }),
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    otlpTracesEndpoint: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    otlpProtocol: config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL,
    otlpHeaders: config.OTEL_EXPORTER_OTLP_HEADERS,
    exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
    rpcClientSpans: config.ARS_TRACE_RPC_CLIENT_SPANS,
  });
  const metrics: MetricsOptions = definedOnly({
    serviceName: identity.serviceName,
    resource,
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    otlpMetricsEndpoint: config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
    exportIntervalMs: config.OTEL_METRIC_EXPORT_INTERVAL,
    otlpHeaders: config.OTEL_EXPORTER_OTLP_HEADERS,
  });
  return { tracing, metrics };
}
